import { AppError } from '@chat/contracts';
import type { Backbone, Channel, DeliveredEvent, Subscription } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import { FanoutQueue } from './fanout-queue.ts';
import { LiveEvent } from './live-event.ts';
import { ScopeOrderer } from './scope-orderer.ts';
import type { CloseReason, SessionSettings } from './stream-session.ts';
import type { StreamSource } from './stream-source.ts';

/** What the hub needs of a stream: its scope, live feed, periodic work and closing. */
export interface HubSession {
  readonly source: Pick<StreamSource, 'channel' | 'scopeKey' | 'readAfter' | 'fromLive'>;
  /** Bounds of the scope's orderer, taken from the scope's first stream. */
  readonly settings: Pick<SessionSettings, 'gapGraceMs' | 'replayPageSize' | 'maxPendingEvents'>;
  /** The event object is shared by every stream of the scope (see {@link LiveEvent.sharedFrame}). */
  onLive(event: LiveEvent): void;
  tick(now: number): void;
  rotateNoLaterThan(at: number): void;
  close(reason: CloseReason): void;
}

export interface StreamHubOptions {
  backbone: Backbone;
  logger: Logger;
  /**
   * Period of the one timer that walks every stream (heartbeats, rotation, rechecks, expiry).
   * @defaultValue 1000
   */
  tickMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** Counts for tests, probes and metrics. */
export interface HubStats {
  sessions: number;
  scopes: number;
  subscriptions: number;
  ticking: boolean;
  draining: boolean;
}

/** The streams of one scope and, for a source whose frames are shared (rooms), its orderer. */
interface Scope {
  readonly sessions: Set<HubSession>;
  readonly orderer: ScopeOrderer | undefined;
}

/**
 * The process-wide fanout: ONE backbone subscription per channel, demultiplexed by scope key to the
 * streams of that scope, and ONE interval that drives every stream's timers, so idle streams cost a
 * map entry each, not a subscription or timer each. A room's events are put in seq order once per
 * scope ({@link ScopeOrderer}), so its streams see them in order and arm no gap timers of their own.
 * An inbox's events carry per-stream data, so each inbox stream still orders its own. Deliveries
 * go through one {@link FanoutQueue}, a slice per turn, so a crowded room never holds the event loop.
 */
export class StreamHub {
  private readonly scopes = new Map<Channel, Map<string, Scope>>();
  private readonly sessions = new Set<HubSession>();
  private readonly subscriptions = new Map<Channel, Promise<Subscription>>();
  private readonly broken = new Set<Channel>();
  private readonly tickMs: number;
  private readonly now: () => number;
  private readonly fanout: FanoutQueue<HubSession, LiveEvent>;
  private ticker: NodeJS.Timeout | undefined;
  private draining = false;

  constructor(private readonly options: StreamHubOptions) {
    this.tickMs = options.tickMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.fanout = new FanoutQueue((session, live) => this.deliverTo(session, live));
  }

  /**
   * Adds a stream; from the moment this resolves it receives every event of its scope published since.
   * @throws AppError STREAM_UNAVAILABLE when the backbone cannot be reached or the hub is draining.
   */
  async register(session: HubSession): Promise<void> {
    if (this.draining) throw new AppError('STREAM_UNAVAILABLE', 'This gateway is shutting down; reconnect.', { retryAfterSeconds: 1 });
    const { channel, scopeKey } = session.source;
    await this.ensureFeed(channel);
    let byScope = this.scopes.get(channel);
    if (!byScope) this.scopes.set(channel, (byScope = new Map()));
    let scope = byScope.get(scopeKey);
    if (!scope) byScope.set(scopeKey, (scope = this.newScope(session)));
    scope.sessions.add(session);
    this.sessions.add(session);
    this.startTicker();
  }

  /**
   * A registered stream read its snapshot high-water mark: the scope's first one tells the orderer
   * where in-order delivery starts.
   */
  snapshotTaken(session: HubSession, highWater: number): void {
    if (!this.sessions.has(session)) return;
    this.scopes.get(session.source.channel)?.get(session.source.scopeKey)?.orderer?.baseline(highWater);
  }

  /**
   * A snapshot barrier for a stream that just registered, without reading the store: the seq its
   * scope's orderer has delivered through, when its scope already streams with a baseline. Every
   * event after it reaches the new stream live; everything up to it is committed, so the stream
   * replays it. Undefined for a new scope, or a source without an orderer (inboxes): read the store.
   */
  deliveredThrough(session: HubSession): number | undefined {
    if (!this.sessions.has(session)) return undefined;
    return this.scopes.get(session.source.channel)?.get(session.source.scopeKey)?.orderer?.deliveredThrough;
  }

  /** Forgets a stream; the last stream of a scope takes the scope's entry, orderer and timer with it. */
  unregister(session: HubSession): void {
    if (!this.sessions.delete(session)) return;
    const { channel, scopeKey } = session.source;
    const byScope = this.scopes.get(channel);
    const scope = byScope?.get(scopeKey);
    scope?.sessions.delete(session);
    if (scope && scope.sessions.size === 0) {
      byScope!.delete(scopeKey);
      scope.orderer?.dispose();
    }
    if (this.sessions.size === 0) this.stopTicker();
  }

  stats(): HubStats {
    let scopes = 0;
    for (const byScope of this.scopes.values()) scopes += byScope.size;
    return { sessions: this.sessions.size, scopes, subscriptions: this.subscriptions.size, ticking: this.ticker !== undefined, draining: this.draining };
  }

  /**
   * Graceful shutdown: refuses new streams, hands every open one off (`handoff`) at moments spread
   * over `windowMs`, and resolves once all are closed; stragglers are closed at the end of the window.
   */
  async drain(windowMs: number): Promise<void> {
    this.draining = true;
    const start = this.now();
    const open = [...this.sessions];
    open.forEach((session, i) => session.rotateNoLaterThan(start + Math.floor((windowMs * i) / Math.max(1, open.length))));
    // Handoffs are due now or later; tick at once so a zero window does not wait for the interval.
    this.tick();
    const deadline = start + windowMs + this.tickMs * 2;
    while (this.sessions.size > 0 && this.now() < deadline) await new Promise((r) => setTimeout(r, Math.min(this.tickMs, 50)));
    for (const session of [...this.sessions]) session.close('shutdown');
  }

  /** Drains at once and drops the backbone subscriptions. */
  async close(): Promise<void> {
    await this.drain(0);
    const subscriptions = [...this.subscriptions.values()];
    this.subscriptions.clear();
    await Promise.all(subscriptions.map(async (s) => (await s.catch(() => undefined))?.close()));
  }

  private async ensureFeed(channel: Channel): Promise<void> {
    let subscription = this.subscriptions.get(channel);
    if (!subscription) {
      subscription = this.options.backbone.subscribe(
        channel,
        (event) => this.dispatch(event),
        (err) => this.onFeedError(channel, err),
      );
      this.subscriptions.set(channel, subscription);
      subscription.catch(() => this.subscriptions.delete(channel));
    }
    try {
      await subscription;
      // After an outage the feed resumes by itself; open new streams only once the backbone answers.
      if (this.broken.has(channel)) {
        await this.options.backbone.ping();
        this.broken.delete(channel);
      }
    } catch (err) {
      throw err instanceof AppError ? err : new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable.', { cause: err, retryAfterSeconds: 1 });
    }
  }

  private newScope(first: HubSession): Scope {
    const sessions = new Set<HubSession>();
    const { source, settings } = first;
    if (source.fromLive) return { sessions, orderer: undefined };
    const orderer = new ScopeOrderer({
      deliver: (event) => this.fanout.push(sessions, event),
      // Every stream of the scope reads the same rows; the room source shares the page read.
      readAfter: (afterSeq, limit) => source.readAfter(afterSeq, limit),
      gapGraceMs: settings.gapGraceMs,
      pageSize: settings.replayPageSize,
      maxHeld: settings.maxPendingEvents,
      logger: this.options.logger,
      scopeKey: source.scopeKey,
    });
    return { sessions, orderer };
  }

  private dispatch(event: DeliveredEvent): void {
    const scope = this.scopes.get(event.channel)?.get(event.scopeKey);
    if (!scope) return;
    if (scope.orderer) scope.orderer.accept(event.seq, event.data);
    else this.fanout.push(scope.sessions, new LiveEvent(event.seq, event.data));
  }

  private deliverTo(session: HubSession, live: LiveEvent): void {
    try {
      session.onLive(live);
    } catch (err) {
      this.options.logger.error({ err, scopeKey: session.source.scopeKey }, 'stream failed on a live event');
      session.close('source_error');
    }
  }

  /** The live feed broke: every stream on it may have missed events, so each closes and its client resumes. */
  private onFeedError(channel: Channel, err: Error): void {
    this.broken.add(channel);
    this.options.logger.warn({ err, channel }, 'backbone feed lost; closing its streams');
    for (const session of [...this.sessions]) if (session.source.channel === channel) session.close('source_error');
  }

  private tick(): void {
    const now = this.now();
    for (const session of this.sessions) session.tick(now);
  }

  private startTicker(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => this.tick(), this.tickMs);
  }

  private stopTicker(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
  }
}
