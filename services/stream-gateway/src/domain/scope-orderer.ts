import type { Logger } from '@chat/observability';
import { LiveEvent } from './live-event.ts';
import type { SourceItem } from './stream-source.ts';

/** What one scope's orderer needs: where events go, where missing ones are read, and its bounds. */
export interface ScopeOrdererOptions {
  /** Hands one event to every current stream of the scope (the hub's fanout). */
  deliver(event: LiveEvent): void;
  /** The scope's committed items after a seq: the source's shared page read. */
  readAfter(afterSeq: number, limit: number): Promise<SourceItem[]>;
  /** Wait for a missing event (publishers race) before reading it from the store (the session's `gapGraceMs`). */
  gapGraceMs: number;
  /** Rows per gap-fill read (the session's `replayPageSize`). */
  pageSize: number;
  /** Events held ahead of a gap; beyond it the orderer gives the gap up to the streams (the session's `maxPendingEvents`). */
  maxHeld: number;
  logger: Logger;
  scopeKey: string;
}

/**
 * Puts one scope's live events in seq order once for the whole gateway, instead of once per stream.
 * API processes publish independently, so a room's events often arrive out of order: an event ahead
 * of the next expected seq is held here, ONE timer waits `gapGraceMs` for the missing ones, and then
 * ONE store read fills the gap. Filled events go out as shared {@link LiveEvent}s, so each frame is
 * built once per event.
 *
 * The streams keep their own rules (only seq == last + 1 is written, older is dropped, newer is held
 * and filled from the store), so whatever the orderer cannot order it passes on as it is and the
 * streams handle it as before: a late or repeated event (seq below the next expected), a gap the
 * store cannot fill yet, a failed read, more held events than `maxHeld`. Nothing it receives is lost.
 *
 * The next expected seq comes from the first stream's snapshot high-water mark ({@link baseline});
 * an event that arrives before any baseline is held until one is known or the timer fires.
 */
export class ScopeOrderer {
  /** Next seq to deliver; undefined until a baseline or the first timer gives one. */
  private next: number | undefined;
  private held: Map<number, LiveEvent> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private filling = false;
  private disposed = false;

  constructor(private readonly options: ScopeOrdererOptions) {}

  /** Events held ahead of a gap (for tests and probes). */
  get heldCount(): number {
    return this.held?.size ?? 0;
  }

  /**
   * The seq through which this scope's events have gone out to its streams, once a baseline is
   * known: every later event reaches every stream registered now (in order, filled from the store, or
   * passed on as it is), so it is a valid snapshot barrier for a stream that just registered.
   */
  get deliveredThrough(): number | undefined {
    return this.disposed || this.next === undefined ? undefined : this.next - 1;
  }

  /** Whether a gap timer (or its follow-up turn) is pending. */
  get waiting(): boolean {
    return this.timer !== undefined || this.immediate !== undefined;
  }

  /** One live event of the scope from the backbone (maybe repeated, late or out of order). */
  accept(seq: number, payload: string): void {
    if (this.disposed) return;
    const next = this.next;
    if (next !== undefined && seq < next) {
      // Late or repeated: streams drop what they already have and place the rest themselves.
      this.options.deliver(new LiveEvent(seq, payload));
      return;
    }
    if (seq === next) {
      // In order (also while a read fills an earlier gap: the read skips what is already out).
      this.next = seq + 1;
      this.options.deliver(new LiveEvent(seq, payload));
      this.drain();
      return;
    }
    this.hold(new LiveEvent(seq, payload));
  }

  /** A stream's snapshot high-water mark: the first one sets where in-order delivery starts. */
  baseline(highWater: number): void {
    if (this.disposed || this.next !== undefined) return;
    this.next = highWater + 1;
    const held = this.held;
    if (held) {
      // Held before the baseline and at or below it: overlaps for the streams, passed on in order.
      for (const seq of [...held.keys()].sort((a, b) => a - b)) {
        if (seq >= this.next) break;
        const event = held.get(seq)!;
        held.delete(seq);
        this.options.deliver(event);
        if (this.disposed) return;
      }
    }
    this.drain();
  }

  /** The scope's last stream left: timers and held events go with it, and a read in flight is ignored. */
  dispose(): void {
    this.disposed = true;
    this.held = undefined;
    this.clearTimer();
  }

  private hold(event: LiveEvent): void {
    this.held ??= new Map();
    if (this.held.has(event.seq)) return;
    this.held.set(event.seq, event);
    if (this.held.size > this.options.maxHeld) {
      this.options.logger.warn({ scopeKey: this.options.scopeKey, held: this.held.size }, 'too many events ahead of a gap; streams fill it');
      this.release();
      return;
    }
    this.armTimer();
  }

  /** Delivers held events from `next` on while they are consecutive. */
  private drain(): void {
    const held = this.held;
    if (this.disposed || !held || this.next === undefined) return;
    for (let event = held.get(this.next); event !== undefined; event = held.get(this.next)) {
      held.delete(this.next);
      this.next++;
      this.options.deliver(event);
      if (this.disposed) return;
    }
    if (held.size === 0 && this.held === held) {
      this.held = undefined;
      this.clearTimer();
    }
  }

  /** Gives the current gap up: held events go out in seq order and the streams fill the rest themselves. */
  private release(): void {
    const held = this.held;
    this.held = undefined;
    this.clearTimer();
    if (!held) return;
    const seqs = [...held.keys()].sort((a, b) => a - b);
    this.next = Math.max(this.next ?? 0, seqs.at(-1)! + 1);
    for (const seq of seqs) {
      this.options.deliver(held.get(seq)!);
      if (this.disposed) return;
    }
  }

  private armTimer(): void {
    if (this.timer || this.immediate || this.filling || this.disposed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // One more I/O turn first: on a busy loop the missing event often already waits in the
      // backbone's socket, and taking it is cheaper than a store read.
      this.immediate = setImmediate(() => {
        this.immediate = undefined;
        void this.fill();
      });
    }, this.options.gapGraceMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /** One store read (more only for full pages) fills the gap before the held events. */
  private async fill(): Promise<void> {
    if (this.disposed || this.filling || !this.held) return;
    if (this.next === undefined) {
      // No stream has a snapshot yet: nothing says what is missing, so the streams decide.
      this.release();
      return;
    }
    this.filling = true;
    let progressed = true;
    let fullPage = true;
    try {
      while (!this.disposed && this.held && progressed && fullPage) {
        const from = this.next;
        const items = await this.options.readAfter(from - 1, this.options.pageSize);
        if (this.disposed) return;
        fullPage = items.length >= this.options.pageSize;
        // Up to the last held event only: what comes after it is still on its way live, in order.
        const until = this.held ? Math.max(...this.held.keys()) : 0;
        for (const item of items) {
          if (item.seq < this.next) continue;
          if (item.seq !== this.next || item.seq > until) break;
          const event = this.held?.get(item.seq) ?? new LiveEvent(item.seq, item.data);
          this.held?.delete(item.seq);
          this.next = item.seq + 1;
          this.options.deliver(event);
          if (this.disposed) return;
        }
        this.drain();
        if (this.disposed) return;
        progressed = this.next > from;
      }
    } catch (err) {
      if (this.disposed) return;
      this.options.logger.warn({ err, scopeKey: this.options.scopeKey }, 'gap fill failed; streams fill it');
      this.filling = false;
      this.release();
      return;
    } finally {
      this.filling = false;
    }
    if (!this.held) return;
    if (!progressed) {
      // The store does not hold what the backbone announced (yet): the streams each handle it as before.
      this.options.logger.warn({ scopeKey: this.options.scopeKey, next: this.next }, 'store behind announced seq; streams fill it');
      this.release();
      return;
    }
    // The read filled part of the gap; what is still missing gets another grace period.
    this.armTimer();
  }
}
