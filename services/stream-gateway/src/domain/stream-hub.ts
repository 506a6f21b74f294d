import { AppError } from '@chat/contracts';
import type { Backbone, Channel, DeliveredEvent, Subscription } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import { startDeliverySpan } from '@chat/tracing';
import { FanoutQueue } from './fanout-queue.ts';
import type { LiveEvent } from './live-event.ts';
import { ScopeOrderer, type OrderedScope, type OrdererSettings } from './scope-orderer.ts';
import type { CloseReason } from './stream-session.ts';
import type { SourceItem, StreamSource } from './stream-source.ts';

/** What the hub needs of a stream: its scope, live feed, periodic work and closing. */
export interface HubSession {
  readonly source: Pick<StreamSource, 'channel' | 'scopeKey' | 'readAfter' | 'fromLive'>;
  /**
   * The next event of its scope, in seq order from the stream's barrier on. The event object is
   * shared by every stream of the scope (see {@link LiveEvent.sharedFrame}).
   */
  onLive(event: LiveEvent): void;
  tick(now: number): void;
  rotateNoLaterThan(at: number): void;
  /** Ends the stream, which then unregisters itself. */
  close(reason: CloseReason): void;
}

export interface StreamHubOptions {
  backbone: Backbone;
  logger: Logger;
  /** Bounds of every scope's orderer (the streams' settings). */
  ordering: OrdererSettings;
  /**
   * Period of the one timer that walks every stream (heartbeats, rotation, rechecks, expiry).
   * @defaultValue 1000
   */
  tickMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
  /** Where the backbone lag and the delivery latency are recorded (the gateway's metrics). @defaultValue nowhere */
  metrics?: HubMetrics;
}

/** What the hub records: each backbone entry's lag, and each live event's latency from its commit. */
export interface HubMetrics {
  backboneRead(channel: Channel, seconds: number): void;
  deliveredLive(kind: 'message' | 'notification', seconds: number): void;
}

/** Counts for tests, probes and metrics. */
export interface HubStats {
  sessions: number;
  scopes: number;
  subscriptions: number;
  ticking: boolean;
  draining: boolean;
}

/** The streams of one scope and the orderer that feeds them. */
class Scope implements OrderedScope {
  readonly sessions = new Set<HubSession>();
  readonly orderer: ScopeOrderer;

  constructor(
    /** The scope's first stream's source: every stream of the scope reads the same rows. */
    private readonly source: HubSession['source'],
    private readonly fanout: FanoutQueue<HubSession, LiveEvent>,
    ordering: OrdererSettings,
    logger: Logger,
  ) {
    this.orderer = new ScopeOrderer(this, ordering, logger);
  }

  get scopeKey(): string {
    return this.source.scopeKey;
  }

  deliver(event: LiveEvent): void {
    if (this.sessions.size === 0) event.delivery?.skipped('closed');
    this.fanout.push(this.sessions, event);
  }

  readAfter(afterSeq: number, limit: number): Promise<SourceItem[]> {
    return this.source.readAfter(afterSeq, limit);
  }

  fillFailed(): void {
    for (const session of [...this.sessions]) session.close('store_error');
  }
}

/**
 * The process-wide fanout, and the one way live events go: ONE backbone subscription per channel,
 * demultiplexed by scope key to the scope's {@link ScopeOrderer}, which puts the events in seq order
 * (filling gaps from the store) once for every stream of the scope; its deliveries go through one
 * {@link FanoutQueue}, a slice per turn, so a crowded room never holds the event loop. ONE interval
 * drives every stream's timers, so idle streams cost a map entry each, not a subscription or timer
 * each. A stream that ends unregisters itself ({@link StreamHub.unregister}).
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
    this.fanout = new FanoutQueue(
      (session, live) => this.deliverTo(session, live),
      undefined,
      undefined,
      (live, sessions) => {
        live.delivery?.delivered(sessions.length);
        this.deliveredToScope(live, sessions[0]!.source.channel);
      },
    );
  }

  /**
   * Adds a stream; from the moment this resolves its scope's orderer hands it every event after what
   * it has delivered, in order (see {@link snapshotTaken} for the barrier the stream replays through).
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
   * A registered stream read its snapshot high-water mark; returns the barrier it replays through
   * (see {@link ScopeOrderer.baseline}). The scope's first one tells the orderer where in-order
   * delivery starts.
   */
  snapshotTaken(session: HubSession, highWater: number): number {
    if (!this.sessions.has(session)) return highWater;
    return this.scopeOf(session)?.orderer.baseline(highWater) ?? highWater;
  }

  /**
   * A snapshot barrier for a stream that just registered, without reading the store: the seq its
   * scope's orderer has delivered through, when its scope already streams with a baseline. Every
   * event after it reaches the new stream live; everything up to it is committed, so the stream
   * replays it. Undefined for a new scope, and for a source whose live data depends on what its
   * snapshot read also reads (`fromLive`: an inbox reads its checkpoint): read the store.
   */
  deliveredThrough(session: HubSession): number | undefined {
    if (!this.sessions.has(session) || session.source.fromLive) return undefined;
    return this.scopeOf(session)?.orderer.deliveredThrough;
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
      scope.orderer.dispose();
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

  private scopeOf(session: HubSession): Scope | undefined {
    return this.scopes.get(session.source.channel)?.get(session.source.scopeKey);
  }

  private newScope(first: HubSession): Scope {
    return new Scope(first.source, this.fanout, this.options.ordering, this.options.logger);
  }

  private dispatch(event: DeliveredEvent): void {
    // An entry ID starts with the milliseconds of its publish (`<ms>-<n>`): parseInt reads them.
    this.options.metrics?.backboneRead(event.channel, Math.max(0, this.now() - parseInt(event.entryId, 10)) / 1000);
    const scope = this.scopes.get(event.channel)?.get(event.scopeKey);
    // A traced event gets one delivery span per gateway that has streams of its scope (tracing on);
    // an untraced one costs nothing more.
    scope?.orderer.accept(event.seq, event.data, event.traceparent === undefined ? undefined : startDeliverySpan(event));
  }

  /**
   * A live event has been written to every stream of its scope here: one latency sample per event
   * and gateway, taken at the last of those writes (the slowest of its streams in this process),
   * not one per stream, which would cost a scope of thousands of streams thousands of samples.
   */
  private deliveredToScope(live: LiveEvent, channel: Channel): void {
    const metrics = this.options.metrics;
    const committedAt = metrics && live.committedAtMs();
    if (committedAt === undefined) return;
    metrics!.deliveredLive(channel === 'messages' ? 'message' : 'notification', Math.max(0, this.now() - committedAt) / 1000);
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
