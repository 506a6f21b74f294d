import type { BackboneEvent, DeadLetter, DeliveredEvent } from '../backbone.ts';
import { entryIdAt, formatEntryId, parseEntryId } from '../entry-id.ts';

interface StoredEntry {
  ms: number;
  n: number;
  event: DeliveredEvent;
}

interface PendingEntry {
  consumer: string;
  deliveredAt: number;
  deliveries: number;
}

interface GroupState {
  lastMs: number;
  lastN: number;
  /** Insertion order is id order: entries enter by ascending reads, claims only change values. */
  pending: Map<string, PendingEntry>;
}

function compare(aMs: number, aN: number, bMs: number, bN: number): number {
  return aMs - bMs || aN - bN;
}

/**
 * One channel's log in memory, modelled on a Redis stream with consumer groups (same id format,
 * same group rules, same trimming rule), so the embedded mode behaves like the distributed one.
 */
export class ChannelLog {
  private entries: StoredEntry[] = [];
  private lastMs = 0;
  private lastN = -1;
  private readonly groups = new Map<string, GroupState>();
  private readonly dead: DeadLetter[] = [];
  private waiters: (() => void)[] = [];

  constructor(private readonly deadLetterMaxLength: number) {}

  append(event: BackboneEvent): DeliveredEvent {
    const now = Date.now();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.lastN = 0;
    } else {
      this.lastN++;
    }
    const delivered: DeliveredEvent = Object.freeze({ ...event, entryId: formatEntryId({ ms: this.lastMs, n: this.lastN }) });
    this.entries.push({ ms: this.lastMs, n: this.lastN, event: delivered });
    this.wake();
    return delivered;
  }

  /** Resolves on the next append (or `wake()`), or after `ms`. */
  waitForEntries(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Like XGROUP CREATE ... 0: a new group starts at the oldest retained entry. */
  ensureGroup(group: string): void {
    if (!this.groups.has(group)) this.groups.set(group, { lastMs: 0, lastN: 0, pending: new Map() });
  }

  /** Like XREADGROUP ... >: the next undelivered entries, now pending for `consumer`. */
  readNew(group: string, consumer: string, count: number): DeliveredEvent[] {
    const state = this.group(group);
    const start = this.firstIndexAfter(state.lastMs, state.lastN);
    const batch = this.entries.slice(start, start + count);
    const now = Date.now();
    for (const entry of batch) {
      state.pending.set(entry.event.entryId, { consumer, deliveredAt: now, deliveries: 1 });
      state.lastMs = entry.ms;
      state.lastN = entry.n;
    }
    return batch.map((entry) => entry.event);
  }

  /** Like XAUTOCLAIM: takes over entries idle at least `minIdleMs`, counting one more delivery each. */
  claimIdle(group: string, consumer: string, minIdleMs: number, count: number): { event: DeliveredEvent; deliveries: number }[] {
    const state = this.group(group);
    const now = Date.now();
    const claimed: { event: DeliveredEvent; deliveries: number }[] = [];
    for (const [entryId, pending] of state.pending) {
      if (claimed.length >= count) break;
      if (now - pending.deliveredAt < minIdleMs) continue;
      const event = this.find(entryId);
      if (!event) {
        state.pending.delete(entryId);
        continue;
      }
      pending.consumer = consumer;
      pending.deliveredAt = now;
      pending.deliveries++;
      claimed.push({ event, deliveries: pending.deliveries });
    }
    return claimed;
  }

  ack(group: string, entryId: string): void {
    this.group(group).pending.delete(entryId);
  }

  /** Records the dead letter and acknowledges the entry in one step, as the Redis MULTI does. */
  deadLetter(letter: DeadLetter): void {
    this.dead.push(letter);
    if (this.dead.length > this.deadLetterMaxLength) this.dead.splice(0, this.dead.length - this.deadLetterMaxLength);
    this.ack(letter.group, letter.entryId);
  }

  deadLetters(limit: number): DeadLetter[] {
    return this.dead.slice(-limit).reverse();
  }

  groupStats(group: string): { pending: number; lag: number } {
    const state = this.group(group);
    return { pending: state.pending.size, lag: this.entries.length - this.firstIndexAfter(state.lastMs, state.lastN) };
  }

  /** Same rule as the Redis trimmer: MINID = min(retention floor, every group's last-delivered and oldest pending). */
  trim(retentionMs: number): { removed: number; remaining: number } {
    let { ms: minMs, n: minN } = parseEntryId(entryIdAt(Date.now() - retentionMs));
    for (const state of this.groups.values()) {
      if (compare(state.lastMs, state.lastN, minMs, minN) < 0) [minMs, minN] = [state.lastMs, state.lastN];
      const oldest = state.pending.keys().next();
      if (!oldest.done) {
        const { ms, n } = parseEntryId(oldest.value);
        if (compare(ms, n, minMs, minN) < 0) [minMs, minN] = [ms, n];
      }
    }
    const removed = this.firstIndexAtOrAfter(minMs, minN);
    if (removed > 0) this.entries = this.entries.slice(removed);
    return { removed, remaining: this.entries.length };
  }

  private group(name: string): GroupState {
    const state = this.groups.get(name);
    if (!state) throw new Error(`no consumer group ${name}`);
    return state;
  }

  private find(entryId: string): DeliveredEvent | undefined {
    const { ms, n } = parseEntryId(entryId);
    const entry = this.entries[this.firstIndexAtOrAfter(ms, n)];
    return entry && entry.ms === ms && entry.n === n ? entry.event : undefined;
  }

  private firstIndexAfter(ms: number, n: number): number {
    return this.search((e) => compare(e.ms, e.n, ms, n) > 0);
  }

  private firstIndexAtOrAfter(ms: number, n: number): number {
    return this.search((e) => compare(e.ms, e.n, ms, n) >= 0);
  }

  /** First index whose entry satisfies `pred` (monotone over the sorted log). */
  private search(pred: (e: StoredEntry) => boolean): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pred(this.entries[mid] as StoredEntry)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
