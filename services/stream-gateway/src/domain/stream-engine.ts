import type { ServerResponse } from 'node:http';
import type { Logger } from '@chat/observability';
import type { GatewayMetrics } from '../metrics.ts';
import { SseOutput, type OutputLimits } from './sse-output.ts';
import type { StreamHub } from './stream-hub.ts';
import type { StreamLease } from '@chat/stream-caps';
import { StreamSession, type PartitionFilter, type SessionEngine, type SessionGrant, type SessionSettings } from './stream-session.ts';
import type { StreamSource } from './stream-source.ts';

/** Everything the engine shares between streams of every kind; its sessions hold it as their {@link SessionEngine}. */
export interface StreamEngine extends SessionEngine {
  hub: StreamHub;
  settings: SessionSettings;
  outputLimits: OutputLimits;
  logger: Logger;
  metrics: GatewayMetrics;
  now: () => number;
}

export interface OpenStreamInput {
  res: ServerResponse;
  source: StreamSource;
  /** Last seq the client has; 0 replays from the start. */
  afterSeq: number;
  grant: SessionGrant;
  /** A partitioned scope's per-stream filter (see {@link PartitionFilter}). */
  filter?: PartitionFilter;
  /** Held by the caller; the session releases it when it closes (or here, when opening fails). */
  lease: StreamLease;
  requestId: string;
}

/** Response headers of every stream: no caching or transformation, no proxy buffering. */
const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * Whether the client's connection is already closed. Node's response marks itself destroyed when its
 * socket closes, the stream front's reflects its socket; a pipelined response has no socket of its
 * own yet, so its request's is asked.
 */
function clientGone(res: ServerResponse): boolean {
  return res.destroyed || (res.socket ?? res.req?.socket)?.destroyed === true;
}

/**
 * Opens a stream on any source: registers with the hub first (listener first), takes the snapshot
 * barrier (read from the store, or the hub's when the scope already streams and the client has all
 * of it), and only then answers 200, so a backbone or store outage is still a clean 503.
 * @throws AppError STREAM_UNAVAILABLE / STORE_UNAVAILABLE before anything was written.
 */
export async function openStream(engine: StreamEngine, input: OpenStreamInput): Promise<void> {
  const { res, source } = input;
  const session = new StreamSession({
    engine,
    source,
    afterSeq: input.afterSeq,
    grant: input.grant,
    filter: input.filter,
    lease: input.lease,
    output: new SseOutput(res, engine.outputLimits),
    requestId: input.requestId,
  });
  // A client that left while the stream was being opened (token, authorization, store reads, the
  // slot) sent its 'close' before anyone listened, and would leave a session writing into nothing
  // that holds its slots until rotation. From here on the session's own listener sees it leave.
  if (clientGone(res)) {
    session.close('client_closed', undefined, 'none');
    return;
  }
  try {
    await engine.hub.register(session);
    // A stream with nothing to replay takes the barrier of its scope's streams, without a query;
    // any other reads the store, so that an outage is a clean 503 before anything is written.
    const delivered = engine.hub.deliveredThrough(session);
    const highWater = delivered !== undefined && delivered <= input.afterSeq ? delivered : await source.highWater();
    session.replayThrough(engine.hub.snapshotTaken(session, highWater));
  } catch (err) {
    session.close('open_failed', undefined, 'none');
    throw err;
  }
  if (session.closed) return;
  res.socket?.setTimeout(0);
  res.writeHead(200, STREAM_HEADERS);
  res.flushHeaders();
  session.output.writeDirect();
  engine.metrics.streamOpened(source.eventName);
  session.begin();
}
