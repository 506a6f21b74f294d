import type { Logger } from '@chat/observability';
import type { DeliverySpan } from '@chat/tracing';
import { LiveEvent } from './live-event.ts';
import type { SessionSettings } from './stream-session.ts';
import type { SourceItem } from './stream-source.ts';

/**
 * Bounds of every orderer: the streams' own settings, one object shared by all scopes. `gapGraceMs`
 * is the wait for a missing event, `replayPageSize` the rows per gap-fill read, `maxPendingEvents`
 * the events held ahead of a gap.
 */
export type OrdererSettings = Pick<SessionSettings, 'gapGraceMs' | 'replayPageSize' | 'maxPendingEvents'>;

/** The scope an orderer works for: where its events go, and where missing ones are read. */
export interface OrderedScope {
  readonly scopeKey: string;
  /** Hands one event to every current stream of the scope (the hub's fanout). */
  deliver(event: LiveEvent): void;
  /** The scope's committed items after a seq: the source's shared page read. */
  readAfter(afterSeq: number, limit: number): Promise<SourceItem[]>;
  /** A gap-fill read failed: the scope's streams cannot go on in order, so they close. */
  fillFailed(): void;
}

/**
 * The one gap filler of the live path: puts one scope's live events in seq order once for the whole
 * gateway, so every stream of the scope gets them in order and only writes them. API processes (and
 * notifiers) publish independently, so a scope's events often arrive out of order: an event ahead of
 * the next expected seq is held here, ONE timer waits `gapGraceMs` for the missing ones, and then ONE
 * store read fills the gap for every stream of the scope. Filled events go out as shared
 * {@link LiveEvent}s, so each frame is built once per event.
 *
 * Nothing goes out of order:
 * - a late or repeated event (seq below the next expected) is dropped: every stream of the scope has
 *   it, or replays through it (see {@link baseline});
 * - at most `maxPendingEvents` events are held ahead of a gap; later ones are not kept, and the fill
 *   reads them from the store with the gap;
 * - a gap the store does not hold yet stays open, and the next event that arrives reads it again;
 * - a failed read closes the scope's streams (`fillFailed`): their clients resume from their cursors.
 *
 * The next expected seq comes from the first stream's snapshot high-water mark ({@link baseline});
 * events that arrive before it are held until it is known.
 */
export class ScopeOrderer {
  /** Next seq to deliver; undefined until the first baseline. */
  private next: number | undefined;
  /** Highest seq seen ahead of `next`, held or not: the fill reads through it. */
  private ahead = 0;
  private held: Map<number, LiveEvent> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private filling = false;
  private disposed = false;

  constructor(
    private readonly scope: OrderedScope,
    private readonly settings: OrdererSettings,
    private readonly logger: Logger,
  ) {}

  /** Events held ahead of a gap (for tests and probes). */
  get heldCount(): number {
    return this.held?.size ?? 0;
  }

  /**
   * The seq through which this scope's events have gone out to its streams, once a baseline is
   * known: every later event reaches every stream registered now, in order, so it is a valid snapshot
   * barrier for a stream that just registered.
   */
  get deliveredThrough(): number | undefined {
    return this.disposed || this.next === undefined ? undefined : this.next - 1;
  }

  /** Whether a gap timer (or its follow-up turn) is pending. */
  get waiting(): boolean {
    return this.timer !== undefined || this.immediate !== undefined;
  }

  /**
   * One live event of the scope from the backbone (maybe repeated, late or out of order), with this
   * gateway's delivery span of it when it is traced: ended by the fanout, or here when it goes nowhere.
   */
  accept(seq: number, payload: string, delivery?: DeliverySpan): void {
    if (this.disposed) {
      delivery?.skipped('closed');
      return;
    }
    const next = this.next;
    if (next !== undefined && seq < next) {
      delivery?.skipped('late');
      return;
    }
    if (seq === next) {
      // In order (also while a read fills an earlier gap: the read skips what is already out).
      this.next = seq + 1;
      this.scope.deliver(new LiveEvent(seq, payload, false, undefined, delivery));
      this.drain();
      return;
    }
    this.hold(seq, payload, delivery);
  }

  /**
   * A registered stream's snapshot high-water mark; returns the barrier the stream replays through.
   * The first one sets where in-order delivery starts. A later one may be below what already went
   * out (its read ran earlier, or before the first baseline, when the events up to it were held and
   * then dropped here), so the barrier is the higher of the two: everything up to it is committed,
   * and every event after it reaches the stream from here, in order.
   */
  baseline(highWater: number): number {
    if (this.disposed) return highWater;
    if (this.next !== undefined) return Math.max(highWater, this.next - 1);
    this.next = highWater + 1;
    const held = this.held;
    // Held before the baseline and at or below it: every stream of the scope replays those.
    if (held) {
      for (const [seq, event] of held) {
        if (seq > highWater) continue;
        held.delete(seq);
        event.delivery?.skipped('late');
      }
    }
    this.drain();
    this.armTimer();
    return highWater;
  }

  /** The scope's last stream left: timers and held events go with it, and a read in flight is ignored. */
  dispose(): void {
    this.disposed = true;
    if (this.held) for (const event of this.held.values()) event.delivery?.skipped('closed');
    this.held = undefined;
    this.clearTimer();
  }

  /** Whether events are missing before the furthest one seen. */
  private get gapOpen(): boolean {
    return this.next !== undefined && this.next <= this.ahead;
  }

  private hold(seq: number, payload: string, delivery: DeliverySpan | undefined): void {
    if (seq > this.ahead) this.ahead = seq;
    const held = (this.held ??= new Map());
    // Beyond the bound the event is not kept: the store has it, and the fill reads it from there.
    if (held.size < this.settings.maxPendingEvents && !held.has(seq)) held.set(seq, new LiveEvent(seq, payload, false, undefined, delivery));
    else delivery?.skipped(held.has(seq) ? 'late' : 'dropped');
    this.armTimer();
  }

  /** Delivers held events from `next` on while they are consecutive. */
  private drain(): void {
    const held = this.held;
    if (this.disposed || !held || this.next === undefined) return;
    for (let event = held.get(this.next); event !== undefined; event = held.get(this.next)) {
      held.delete(this.next);
      this.next++;
      this.scope.deliver(event);
      if (this.disposed) return;
    }
    if (!this.gapOpen && this.held === held) {
      this.held = undefined;
      this.clearTimer();
    }
  }

  private armTimer(): void {
    if (this.timer || this.immediate || this.filling || this.disposed || !this.gapOpen) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // One more I/O turn first: on a busy loop the missing event often already waits in the
      // backbone's socket, and taking it is cheaper than a store read.
      this.immediate = setImmediate(() => {
        this.immediate = undefined;
        void this.fill();
      });
    }, this.settings.gapGraceMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /** One store read (more only for full pages) fills the gap, through the furthest event seen. */
  private async fill(): Promise<void> {
    if (this.disposed || this.filling || !this.gapOpen) return;
    const { replayPageSize } = this.settings;
    this.filling = true;
    let progressed = true;
    let fullPage = true;
    try {
      while (!this.disposed && this.gapOpen && progressed && fullPage) {
        const from = this.next!;
        const items = await this.scope.readAfter(from - 1, replayPageSize);
        if (this.disposed) return;
        fullPage = items.length >= replayPageSize;
        for (const item of items) {
          if (item.seq < this.next!) continue;
          // Through the furthest event seen only: what comes after it is still on its way live, in order.
          if (item.seq !== this.next || item.seq > this.ahead) break;
          const event = this.held?.get(item.seq) ?? new LiveEvent(item.seq, item.data, true, item.partition);
          this.held?.delete(item.seq);
          this.next = item.seq + 1;
          this.scope.deliver(event);
          if (this.disposed) return;
        }
        this.drain();
        if (this.disposed) return;
        progressed = this.next! > from;
      }
    } catch (err) {
      if (this.disposed) return;
      this.logger.warn({ err, scopeKey: this.scope.scopeKey }, 'gap fill failed; closing the streams of the scope');
      this.filling = false;
      this.scope.fillFailed();
      return;
    } finally {
      this.filling = false;
    }
    if (this.disposed || !this.gapOpen) return;
    if (!progressed) {
      // Every seq before one published is committed, so this passes; until then, the next event reads again.
      this.logger.warn({ scopeKey: this.scope.scopeKey, next: this.next, ahead: this.ahead }, 'store behind announced seq; the next event reads again');
      return;
    }
    // The read filled part of the gap; what is still missing gets another grace period.
    this.armTimer();
  }
}
