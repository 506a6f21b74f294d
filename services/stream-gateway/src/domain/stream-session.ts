import type { ServerResponse } from 'node:http';
import type { Logger } from '@chat/observability';
import type { StreamLease } from '@chat/stream-caps';
import { jittered } from './jitter.ts';
import { durableFrame, handoffFrame, reauthorizeFrame, type ReauthorizeReason } from './sse-frame.ts';
import { firstHeartbeatDelay, sharedHeartbeatFrame } from './heartbeat.ts';
import type { SseOutput } from './sse-output.ts';
import { EncodedFrame } from './encoded-frame.ts';
import type { LiveEvent } from './live-event.ts';
import type { SourceItem, StreamSource } from './stream-source.ts';

/** Timings and bounds of one stream. */
export interface SessionSettings {
  /** Interval of `heartbeat` events. @defaultValue 15000 */
  heartbeatMs: number;
  /** Age at which a stream sends `handoff` and closes (jittered ±20%). @defaultValue 1800000 */
  maxStreamAgeMs: number;
  /** Interval of live authorization rechecks (jittered ±20%). @defaultValue 60000 */
  recheckMs: number;
  /** A stream closes this long before its token expires. @defaultValue 5000 */
  tokenExpiryMarginMs: number;
  /** Rows read from the store per replay or gap-fill query. @defaultValue 200 */
  replayPageSize: number;
  /**
   * Live events held by a stream while it replays, and by a scope's orderer ahead of a gap; beyond
   * it they are read from the store. @defaultValue 1000
   */
  maxPendingEvents: number;
  /** Wait for a missing live event (publishers race) before the scope's orderer reads it from the store. @defaultValue 50 */
  gapGraceMs: number;
}

/** Why a session ended; also the label of the close metric. */
export type CloseReason =
  | 'client_closed'
  | 'slow_consumer'
  | 'source_error'
  | 'store_error'
  | 'rotation'
  | 'shutdown'
  | 'open_failed'
  | ReauthorizeReason;

/** The live authority behind a stream. */
export interface SessionGrant {
  /** When the bearer token stops being valid. */
  expiresAt: Date;
  /** Asks core again; `revoked` for a denial or a rejected principal, `unavailable` when core cannot say. */
  recheck(): Promise<'allowed' | 'revoked' | 'unavailable'>;
}

/**
 * Which items of a partitioned scope a stream sends (a principal feed: those of the repositories its
 * principal may read now). The answer may change over the stream's life (its grant's recheck); an
 * item it refuses is passed over, never sent later.
 */
export interface PartitionFilter {
  admits(partition: string | undefined): boolean;
}

/** What a session uses of the engine that opened it: one object shared by all its sessions. */
export interface SessionEngine {
  readonly settings: SessionSettings;
  /** The engine's logger; a session binds its request ID and scope only when it logs. */
  readonly logger: Logger;
  readonly now: () => number;
  /** Where the session is registered; it unregisters itself there when it ends. */
  readonly hub: { unregister(session: StreamSession): void };
  /** What a session reports of itself (the gateway's metrics). */
  readonly metrics: SessionMetrics;
}

export interface SessionMetrics {
  streamClosed(kind: StreamSource['eventName'], reason: CloseReason): void;
  delivered(kind: StreamSource['eventName'], from: 'store' | 'live'): void;
}

export interface StreamSessionOptions {
  engine: SessionEngine;
  source: StreamSource;
  /** Last seq the client already has (0: replay from the start). */
  afterSeq: number;
  grant: SessionGrant;
  /** A partitioned scope's filter: only the items it admits are sent. Absent: every item is. */
  filter?: PartitionFilter;
  lease: StreamLease;
  output: SseOutput;
  /** The request that opened the stream, for log lines. */
  requestId?: string;
}

type OutputEnding = 'end' | 'destroy' | 'none';

/**
 * The frame of each item a replay sent, built by the first stream that sends it. The streams of a
 * room that read the same page at once share its items (RoomSource.readAfter), and after a gateway
 * loss hundreds of them resume from the same event together: one cursor MAC and one encoding per
 * item, as for live events, instead of one per stream (in a reconnect storm of 1,000 streams the MACs
 * alone were 6 % of the surviving gateway's CPU). A cursor depends on its scope and seq alone, so the
 * frame is the same for every stream the item was read for. Kept as long as the page is.
 */
const replayFrames = new WeakMap<SourceItem, EncodedFrame>();

const kSession = Symbol('stream session');

/** A response that carries its session, so one shared `close` listener serves every stream. */
type SessionResponse = ServerResponse & { [kSession]?: StreamSession | undefined };

/** The client went away (or the socket failed): the session ends without touching the response. */
function onResponseClose(this: SessionResponse): void {
  this[kSession]?.close('client_closed', undefined, 'none');
}

/**
 * One open stream, which writes what it is given in seq order to its client and ends when its
 * client leaves. Listener first: the hub feeds `onLive` from registration on, while the opener reads
 * the snapshot barrier; `begin` then replays from the store through the barrier, writes what arrived
 * meanwhile, and goes live. Every send goes through one rule: only seq == last + 1 is written and an
 * older seq is an overlap, dropped. While replaying, newer live events are held (at most
 * `maxPendingEvents`; the replay reads the rest from the store). Once live, the scope's orderer hands
 * it every event after its barrier in order, gaps already filled; a skipped seq would be a broken
 * promise, and the stream ends rather than write past it.
 */
export class StreamSession {
  // The fields are the session's whole per-stream state: an idle gateway holds one session per
  // stream, so nothing here is allocated before it is needed (`pending`, the child logger).
  readonly source: StreamSource;
  readonly output: SseOutput;
  readonly requestId: string | undefined;
  private readonly engine: SessionEngine;
  private readonly grant: SessionGrant;
  private readonly filter: PartitionFilter | undefined;
  private readonly lease: StreamLease;
  private boundLogger: Logger | undefined;
  private lastSeq: number;
  /** The seq the replay runs through: the snapshot barrier, raised by live events that arrive meanwhile. */
  private target: number;
  /** Live events that arrived during the replay. */
  private pending: Map<number, LiveEvent> | undefined;
  private begun = false;
  private replaying = false;
  private isClosed = false;
  private rechecking = false;
  private nextHeartbeatAt: number;
  private nextRecheckAt: number;
  private rotateAt: number;
  private readonly expiryCloseAt: number;

  constructor(options: StreamSessionOptions) {
    this.engine = options.engine;
    this.source = options.source;
    this.output = options.output;
    this.requestId = options.requestId;
    this.grant = options.grant;
    this.filter = options.filter;
    this.lease = options.lease;
    this.lastSeq = options.afterSeq;
    this.target = options.afterSeq;
    const now = this.engine.now();
    const { settings } = this.engine;
    this.nextHeartbeatAt = now + firstHeartbeatDelay(settings.heartbeatMs);
    this.nextRecheckAt = now + jittered(settings.recheckMs, 0.2);
    this.rotateAt = now + jittered(settings.maxStreamAgeMs, 0.2);
    this.expiryCloseAt = options.grant.expiresAt.getTime() - settings.tokenExpiryMarginMs;
    const res = this.output.response as SessionResponse;
    res[kSession] = this;
    res.on('close', onResponseClose);
  }

  /** The engine's logger bound to this stream's request ID and scope, made on first use. */
  get logger(): Logger {
    this.boundLogger ??= this.engine.logger.child({ requestId: this.requestId, scopeKey: this.source.scopeKey });
    return this.boundLogger;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Sets the snapshot barrier: the replay runs through it, and live events up to it are overlaps. */
  replayThrough(barrier: number): void {
    if (barrier > this.target) this.target = barrier;
  }

  /** Starts replay and live delivery; the response headers are out. */
  begin(): void {
    if (this.isClosed) return;
    this.begun = true;
    void this.replay();
  }

  /** The next live event of this scope from its orderer, in seq order (maybe one this stream already has). */
  onLive(event: LiveEvent): void {
    const { seq } = event;
    if (this.isClosed || seq <= this.lastSeq) return;
    if (!this.begun || this.replaying) {
      this.hold(event);
      return;
    }
    if (seq !== this.lastSeq + 1) {
      this.logger.error({ seq, lastSeq: this.lastSeq }, 'live event skips a seq; closing');
      this.close('source_error');
      return;
    }
    this.sendLive(event);
  }

  /** Periodic work, driven by the hub's one timer: expiry, rotation, heartbeat, recheck. */
  tick(now: number): void {
    if (this.isClosed || !this.begun) return;
    if (now >= this.expiryCloseAt) {
      this.close('token_expiring', reauthorizeFrame('token_expiring'));
      return;
    }
    if (now >= this.rotateAt) {
      this.close('rotation', handoffFrame());
      return;
    }
    if (now >= this.nextHeartbeatAt) {
      this.nextHeartbeatAt = now + this.engine.settings.heartbeatMs;
      if (!this.output.write(sharedHeartbeatFrame(now))) {
        this.close('slow_consumer', undefined, 'destroy');
        return;
      }
    }
    if (now >= this.nextRecheckAt && !this.rechecking) void this.recheck(now);
  }

  /** Brings the planned rotation forward (graceful shutdown spreads these over its window). */
  rotateNoLaterThan(at: number): void {
    if (at < this.rotateAt) this.rotateAt = at;
  }

  /**
   * Ends the session exactly once: the final control frame (if any) is written, its lease is
   * released, and it unregisters from the hub. `none` leaves the response alone (it failed before
   * opening, or its client is gone).
   */
  close(reason: CloseReason, finalFrame?: string, ending: OutputEnding = 'end'): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.pending = undefined;
    const { output, engine } = this;
    // A client that is not reading would never take the final frame; drop it rather than hold the buffer.
    if (ending === 'destroy' || (ending === 'end' && output.backedUp)) output.destroy();
    else if (ending === 'end') output.end(finalFrame);
    const res = output.response as SessionResponse;
    res.off('close', onResponseClose);
    res[kSession] = undefined;
    this.lease.release().catch((err: unknown) => this.logger.warn({ err }, 'stream lease release failed; it expires by itself'));
    engine.hub.unregister(this);
    engine.metrics.streamClosed(this.source.eventName, reason);
    engine.logger.debug({ requestId: this.requestId, scopeKey: this.source.scopeKey, reason }, 'stream closed');
  }

  private hold(event: LiveEvent): void {
    if (event.seq > this.target) this.target = event.seq;
    // Beyond the bound the event is not kept: the store still has it and the replay reads it from there.
    this.pending ??= new Map();
    if (this.pending.size < this.engine.settings.maxPendingEvents) this.pending.set(event.seq, event);
  }

  /**
   * Writes one event from the orderer. Its frame is shared by every stream of the scope, unless the
   * source makes live data per stream (`fromLive`) and the event came from the backbone.
   */
  private sendLive(event: LiveEvent): boolean {
    const { source } = this;
    if (this.filter !== undefined && !this.filter.admits(event.partitionIn(source))) return this.passOver(event.seq);
    const frame = source.fromLive && !event.fromStore ? this.frameOf(event.seq, source.fromLive(event.seq, event.payload)) : event.sharedFrame(source);
    return this.sendFrame(event.seq, frame, event.fromStore ? 'store' : 'live');
  }

  /** An item the stream's filter refuses: its position moves past it, so it is never sent, and nothing is written. */
  private passOver(seq: number): true {
    this.lastSeq = seq;
    return true;
  }

  private frameOf(seq: number, data: string): string {
    return durableFrame(this.source.cursorFor(seq), this.source.eventName, data);
  }

  private replayFrame(item: SourceItem): EncodedFrame {
    let frame = replayFrames.get(item);
    if (!frame) replayFrames.set(item, (frame = new EncodedFrame(Buffer.from(this.frameOf(item.seq, item.data), 'utf8'))));
    return frame;
  }

  /** Writes one durable event; false (and the stream closed) when the client is too far behind. */
  private sendFrame(seq: number, frame: string | EncodedFrame, from: 'store' | 'live'): boolean {
    this.lastSeq = seq;
    this.engine.metrics.delivered(this.source.eventName, from);
    if (this.output.write(frame)) return true;
    this.close('slow_consumer', undefined, 'destroy');
    return false;
  }

  private flushPending(): void {
    const pending = this.pending;
    if (!pending) return;
    for (let event = pending.get(this.lastSeq + 1); event !== undefined; event = pending.get(this.lastSeq + 1)) {
      pending.delete(event.seq);
      if (!this.sendLive(event)) return;
    }
    for (const seq of pending.keys()) if (seq <= this.lastSeq) pending.delete(seq);
    if (pending.size === 0 && this.pending === pending) this.pending = undefined;
  }

  /**
   * Writes everything through `target`, from held live events where it can and from the store
   * otherwise, a page at a time and never faster than the client reads; then the stream is live.
   */
  private async replay(): Promise<void> {
    this.replaying = true;
    const { replayPageSize } = this.engine.settings;
    try {
      while (!this.isClosed) {
        this.flushPending();
        if (this.isClosed || this.target <= this.lastSeq) break;
        await this.output.whenWritable();
        if (this.isClosed) break;
        const items = await this.source.readAfter(this.lastSeq, replayPageSize);
        if (this.isClosed) break;
        if (items[0]?.seq !== this.lastSeq + 1) {
          // Everything through `target` is committed (a snapshot, or events published after their
          // commit), so this is a store that lost or reset what it had: the client resumes later.
          this.logger.warn({ lastSeq: this.lastSeq, target: this.target }, 'store behind the barrier of a stream; closing');
          this.close('store_error');
          return;
        }
        for (const item of items) {
          if (item.seq !== this.lastSeq + 1) break;
          if (this.filter !== undefined && !this.filter.admits(item.partition)) {
            this.passOver(item.seq);
            continue;
          }
          if (!this.sendFrame(item.seq, this.replayFrame(item), 'store')) return;
          if (this.output.backedUp) await this.output.whenWritable();
          if (this.isClosed) return;
        }
      }
    } catch (err) {
      this.logger.warn({ err }, 'stream replay failed; closing');
      this.close('store_error');
    } finally {
      this.replaying = false;
    }
  }

  private async recheck(now: number): Promise<void> {
    this.rechecking = true;
    this.nextRecheckAt = now + jittered(this.engine.settings.recheckMs, 0.2);
    let verdict: 'allowed' | 'revoked' | 'unavailable';
    try {
      verdict = await this.grant.recheck();
    } catch {
      verdict = 'unavailable';
    } finally {
      this.rechecking = false;
    }
    if (this.isClosed || verdict === 'allowed') return;
    const reason = verdict === 'revoked' ? 'access_revoked' : 'authorization_unavailable';
    this.close(reason, reauthorizeFrame(reason));
  }
}
