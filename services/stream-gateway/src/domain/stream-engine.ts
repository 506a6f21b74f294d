import type { ServerResponse } from 'node:http';
import type { Logger } from '@chat/observability';
import type { GatewayMetrics } from '../metrics.ts';
import { SseOutput, type OutputLimits } from './sse-output.ts';
import type { StreamHub } from './stream-hub.ts';
import type { StreamLease } from '@chat/stream-caps';
import { StreamSession, type SessionGrant, type SessionHooks, type SessionSettings } from './stream-session.ts';
import type { StreamSource } from './stream-source.ts';

/** Everything the engine shares between streams of every kind. */
export interface StreamEngine {
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

const kSession = Symbol('stream session');

/** A response that carries its session, so one shared `close` listener serves every stream. */
type SessionResponse = ServerResponse & { [kSession]?: StreamSession | undefined };

/** The client went away (or the socket failed): the session ends without touching the response. */
function onResponseClose(this: SessionResponse): void {
  this[kSession]?.close('client_closed', undefined, 'none');
}

/**
 * Whether the client's connection is already closed. Node's response marks itself destroyed when its
 * socket closes, the stream front's reflects its socket; a pipelined response has no socket of its
 * own yet, so its request's is asked.
 */
function clientGone(res: ServerResponse): boolean {
  return res.destroyed || (res.socket ?? res.req?.socket)?.destroyed === true;
}

const hooksByEngine = new WeakMap<StreamEngine, SessionHooks>();

/** The engine's session hooks, made once per engine and shared by all its sessions. */
function hooksOf(engine: StreamEngine): SessionHooks {
  let hooks = hooksByEngine.get(engine);
  if (!hooks) {
    hooks = {
      delivered: (session, from) => engine.metrics.delivered(session.source.eventName, from),
      closed: (session, reason) => {
        const res = session.output.response as SessionResponse;
        res.off('close', onResponseClose);
        res[kSession] = undefined;
        engine.hub.unregister(session);
        engine.metrics.streamClosed(session.source.eventName, reason);
        engine.logger.debug({ requestId: session.requestId, scopeKey: session.source.scopeKey, reason }, 'stream closed');
      },
    };
    hooksByEngine.set(engine, hooks);
  }
  return hooks;
}

/**
 * Opens a stream on any source: registers with the hub first (listener first), takes the snapshot
 * barrier (read from the store, or the hub's when the scope already streams and the client has all
 * of it), and only then answers 200, so a backbone or store outage is still a clean 503.
 * @throws AppError STREAM_UNAVAILABLE / STORE_UNAVAILABLE before anything was written.
 */
export async function openStream(engine: StreamEngine, input: OpenStreamInput): Promise<void> {
  const res = input.res as SessionResponse;
  const session = new StreamSession({
    source: input.source,
    afterSeq: input.afterSeq,
    grant: input.grant,
    lease: input.lease,
    output: new SseOutput(res, engine.outputLimits),
    settings: engine.settings,
    logger: engine.logger,
    requestId: input.requestId,
    now: engine.now,
    hooks: hooksOf(engine),
  });
  res[kSession] = session;
  res.on('close', onResponseClose);
  // A client that left while the stream was being opened (token, authorization, store reads, the
  // slot) sent its 'close' before anyone listened, and would leave a session writing into nothing
  // that holds its slots until rotation. From here on the listener above sees it leave.
  if (clientGone(res)) {
    session.close('client_closed', undefined, 'none');
    return;
  }
  try {
    await engine.hub.register(session);
    // A stream with nothing to replay takes the barrier of its scope's streams, without a query;
    // any other reads the store, so that an outage is a clean 503 before anything is written.
    const delivered = engine.hub.deliveredThrough(session);
    const caughtUp = delivered !== undefined && delivered <= input.afterSeq;
    engine.hub.snapshotTaken(session, caughtUp ? session.primeAt(delivered) : await session.prime());
  } catch (err) {
    session.close('open_failed', undefined, 'none');
    throw err;
  }
  if (session.closed) return;
  res.socket?.setTimeout(0);
  res.writeHead(200, STREAM_HEADERS);
  res.flushHeaders();
  session.output.writeDirect();
  engine.metrics.streamOpened(input.source.eventName);
  session.begin();
}
