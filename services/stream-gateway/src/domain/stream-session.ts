import type { ServerResponse } from 'node:http';
import type { Logger } from '@chat/observability';
import type { GatewayMetrics } from '../metrics.ts';
import { jittered } from './jitter.ts';
import { durableFrame, handoffFrame, reauthorizeFrame, type ReauthorizeReason } from './sse-frame.ts';
import { firstHeartbeatDelay, sharedHeartbeatFrame } from './heartbeat.ts';
import type { SseOutput } from './sse-output.ts';
import type { StreamLease } from '@chat/stream-caps';
import type { EncodedFrame } from './encoded-frame.ts';
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
  /** Live events held while replaying; beyond it they are re-read from the store. @defaultValue 1000 */
  maxPendingEvents: number;
  /** Wait for a missing live event (publishers race) before reading it from the store. @defaultValue 50 */
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

/** What a session uses of the engine that opened it: one object shared by all its sessions. */
export interface SessionEngine {
  readonly settings: SessionSettings;
  /** The engine's logger; a session binds its request ID and scope only when it logs. */
  readonly logger: Logger;
  readonly now: () => number;
  /** Where the session is registered; it unregisters itself there when it ends. */
  readonly hub: { unregister(session: StreamSession): void };
  readonly metrics: Pick<GatewayMetrics, 'delivered' | 'streamClosed'>;
}

export interface StreamSessionOptions {
  engine: SessionEngine;
  source: StreamSource;
  /** Last seq the client already has (0: replay from the start). */
  afterSeq: number;
  grant: SessionGrant;
  lease: StreamLease;
  output: SseOutput;
  /** The request that opened the stream, for log lines. */
  requestId?: string;
}

type OutputEnding = 'end' | 'destroy' | 'none';

const kSession = Symbol('stream session');

/** A response that carries its session, so one shared `close` listener serves every stream. */
type SessionResponse = ServerResponse & { [kSession]?: StreamSession | undefined };

/** The client went away (or the socket failed): the session ends without touching the response. */
function onResponseClose(this: SessionResponse): void {
  this[kSession]?.close('client_closed', undefined, 'none');
}

/**
 * One open stream, which ends when its client leaves and then unregisters itself from the hub.
 * Listener first: the hub feeds `onLive` from registration on, while `prime` reads
 * the snapshot high-water mark; `begin` then replays from the store up to it, drains what arrived
 * meanwhile, and goes live. Every send goes through one rule: only seq == last + 1 is written; an
 * older seq is an overlap and dropped; a newer one is a gap, filled from the store. A room's live
 * events already come in order from the hub (one orderer per scope), so for rooms this gap rule is
 * the safety net for what the hub passes on unordered (a gap the store could not fill yet).
 */
export class StreamSession {
  // The fields are the session's whole per-stream state: an idle gateway holds one session per
  // stream, so nothing here is allocated before it is needed (`pending`, the child logger).
  readonly source: StreamSource;
  readonly output: SseOutput;
  readonly requestId: string | undefined;
  private readonly grant: SessionGrant;
  private readonly lease: StreamLease;
  readonly settings: SessionSettings;
  private readonly engine: SessionEngine;
  private boundLogger: Logger | undefined;
  private lastSeq: number;
  private target: number;
  /** Live events that arrived ahead of their turn, as ready frames. */
  private pending: Map<number, string | EncodedFrame> | undefined;
  private begun = false;
  private pumping = false;
  private isClosed = false;
  private rechecking = false;
  private gapTimer: NodeJS.Timeout | undefined;
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
    this.lease = options.lease;
    this.settings = options.engine.settings;
    this.lastSeq = options.afterSeq;
    this.target = options.afterSeq;
    const now = this.engine.now();
    const { settings } = this;
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

  /** Reads the snapshot barrier and returns it. Throws (STORE_UNAVAILABLE) before anything was sent. */
  async prime(): Promise<number> {
    return this.primeAt(await this.source.highWater());
  }

  /** Takes `highWater` as the snapshot barrier (one the hub already knows for the scope) and returns it. */
  primeAt(highWater: number): number {
    if (highWater > this.target) this.target = highWater;
    return highWater;
  }

  /** Starts replay and live delivery; the response headers are out. */
  begin(): void {
    if (this.isClosed) return;
    this.begun = true;
    void this.pump();
  }

  /** A live event of this scope from the backbone (maybe repeated, late or out of order). */
  onLive(event: LiveEvent): void {
    const { seq } = event;
    if (this.isClosed || seq <= this.lastSeq) return;
    const frame = this.source.fromLive ? this.frameOf({ seq, data: this.source.fromLive(seq, event.payload) }) : event.sharedFrame(this.source);
    if (seq > this.target) this.target = seq;
    if (!this.begun || this.pumping) {
      this.hold(seq, frame);
      return;
    }
    if (seq === this.lastSeq + 1) {
      if (!this.sendFrame(seq, frame)) return;
      this.flushPending();
    } else {
      this.hold(seq, frame);
    }
    if (this.target > this.lastSeq) this.armGapTimer();
    else this.clearGapTimer();
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
      this.nextHeartbeatAt = now + this.settings.heartbeatMs;
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
    this.clearGapTimer();
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

  private hold(seq: number, frame: string | EncodedFrame): void {
    // Beyond the bound the event is not kept: the store still has it and the pump reads it from there.
    this.pending ??= new Map();
    if (this.pending.size < this.settings.maxPendingEvents) this.pending.set(seq, frame);
  }

  private frameOf(item: SourceItem): string {
    return durableFrame(this.source.cursorFor(item.seq), this.source.eventName, item.data);
  }

  /** Writes one durable item; false (and the stream closed) when the client is too far behind. */
  private send(item: SourceItem): boolean {
    return this.sendFrame(item.seq, this.frameOf(item), 'store');
  }

  private sendFrame(seq: number, frame: string | EncodedFrame, from: 'store' | 'live' = 'live'): boolean {
    this.lastSeq = seq;
    this.engine.metrics.delivered(this.source.eventName, from);
    if (this.output.write(frame)) return true;
    this.close('slow_consumer', undefined, 'destroy');
    return false;
  }

  private flushPending(): void {
    const pending = this.pending;
    if (!pending) return;
    for (let frame = pending.get(this.lastSeq + 1); frame !== undefined; frame = pending.get(this.lastSeq + 1)) {
      pending.delete(this.lastSeq + 1);
      if (!this.sendFrame(this.lastSeq + 1, frame)) return;
    }
    for (const seq of pending.keys()) if (seq <= this.lastSeq) pending.delete(seq);
    if (pending.size === 0 && this.pending === pending) this.pending = undefined;
  }

  private armGapTimer(): void {
    if (this.gapTimer || this.isClosed) return;
    this.gapTimer = setTimeout(() => {
      this.gapTimer = undefined;
      // One more I/O turn first: on a busy loop the missing event often already waits in the
      // backbone's socket, and taking it is far cheaper than a store read per stream of the room.
      setImmediate(() => void this.pump());
    }, this.settings.gapGraceMs);
  }

  private clearGapTimer(): void {
    if (this.gapTimer) clearTimeout(this.gapTimer);
    this.gapTimer = undefined;
  }

  /** Sends everything up to `target`, from held live events where it can and from the store otherwise. */
  private async pump(): Promise<void> {
    if (this.pumping || this.isClosed || !this.begun) return;
    this.pumping = true;
    this.clearGapTimer();
    try {
      while (!this.isClosed) {
        this.flushPending();
        if (this.isClosed || this.target <= this.lastSeq) break;
        await this.output.whenWritable();
        if (this.isClosed) break;
        const items = await this.source.readAfter(this.lastSeq, this.settings.replayPageSize);
        if (this.isClosed) break;
        if (items.length === 0 || items[0]!.seq !== this.lastSeq + 1) {
          // The store always holds what the backbone announced; if not, wait for the next event to retry.
          this.logger.warn({ scopeKey: this.source.scopeKey, lastSeq: this.lastSeq, target: this.target }, 'store behind announced seq');
          this.target = this.lastSeq;
          break;
        }
        for (const item of items) {
          if (item.seq !== this.lastSeq + 1) break;
          if (!this.send(item)) return;
          if (this.output.backedUp) await this.output.whenWritable();
          if (this.isClosed) return;
        }
      }
    } catch (err) {
      this.logger.warn({ err, scopeKey: this.source.scopeKey }, 'stream replay failed; closing');
      this.close('store_error');
      return;
    } finally {
      this.pumping = false;
    }
    if (!this.isClosed && (this.target > this.lastSeq || this.pending?.has(this.lastSeq + 1) === true)) this.armGapTimer();
  }

  private async recheck(now: number): Promise<void> {
    this.rechecking = true;
    this.nextRecheckAt = now + jittered(this.settings.recheckMs, 0.2);
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
