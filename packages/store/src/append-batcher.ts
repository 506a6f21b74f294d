import type { AppendOptions, AppendOutcome, NewMessage } from './message.repository.ts';
import { roomScopeKey, type RoomScope } from './room.repository.ts';

export interface PendingAppend {
  scope: RoomScope;
  message: NewMessage;
  options: AppendOptions;
}

export interface AppendBatcherOptions {
  /** Most appends one transaction carries. @defaultValue 64 */
  maxBatch?: number;
  /** Most append transactions this process runs at once, not counting stalled ones. @defaultValue 2 */
  maxConcurrent?: number;
  /**
   * A transaction still running after this long is stalled: it stops holding its lane, so appends
   * to other rooms are not held up behind one slow statement (a long lock wait, a slow fsync).
   * @defaultValue 50
   */
  stalledAfterMs?: number;
  /** Most append transactions this process runs at once, stalled ones included. @defaultValue 4 */
  maxInFlight?: number;
  /**
   * Start a transaction only after the current event-loop turn, so that every append submitted in
   * it joins, even when no transaction is running for them to queue behind. Without it, an idle
   * batcher sends each first append alone; on PGlite, where a statement's fixed cost is several
   * appends' worth, most appends went that way.
   * @defaultValue false
   */
  startOnNextTurn?: boolean;
}

/**
 * Coalesces concurrent appends into few transactions. Appends to a room serialize on its row lock,
 * held through the commit's fsync, and every transaction costs its own round trips and fsync; so
 * while transactions run, new appends queue here and the next transaction takes all of them, across
 * rooms (up to `maxBatch`). A room is in at most one running transaction of this process, and its
 * appends leave the queue in arrival order. Each caller gets its own outcome; a failed transaction
 * fails every caller in it (nothing of it was committed).
 */
export class AppendBatcher {
  private queue: Entry[] = [];
  private readonly roomsInFlight = new Set<string>();
  /** Transactions holding a lane (running and not stalled). */
  private active = 0;
  private inFlight = 0;
  private readonly maxBatch: number;
  private readonly maxConcurrent: number;
  private readonly stalledAfterMs: number;
  private readonly maxInFlight: number;
  private readonly startOnNextTurn: boolean;
  private pumpScheduled = false;

  constructor(
    private readonly commit: (items: PendingAppend[]) => Promise<AppendOutcome[]>,
    options: AppendBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 64;
    this.maxConcurrent = options.maxConcurrent ?? 2;
    this.stalledAfterMs = options.stalledAfterMs ?? 50;
    this.maxInFlight = Math.max(this.maxConcurrent, options.maxInFlight ?? 4);
    this.startOnNextTurn = options.startOnNextTurn ?? false;
  }

  submit(item: PendingAppend): Promise<AppendOutcome> {
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.queue.push({ ...item, roomKey: roomScopeKey(item.scope), settle: { resolve, reject } });
      this.schedulePump();
    });
  }

  private schedulePump(): void {
    if (!this.startOnNextTurn) {
      this.pump();
      return;
    }
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.maxConcurrent && this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.takeBatch();
      if (batch.length === 0) return;
      void this.run(batch);
    }
  }

  /** The oldest queued appends whose rooms are not in a running transaction, in queue order. */
  private takeBatch(): Entry[] {
    const batch: Entry[] = [];
    const rest: Entry[] = [];
    const taken = new Set<string>();
    for (const entry of this.queue) {
      if (batch.length < this.maxBatch && !this.roomsInFlight.has(entry.roomKey)) {
        batch.push(entry);
        taken.add(entry.roomKey);
      } else {
        rest.push(entry);
      }
    }
    for (const key of taken) this.roomsInFlight.add(key);
    this.queue = rest;
    return batch;
  }

  private async run(batch: Entry[]): Promise<void> {
    this.active += 1;
    this.inFlight += 1;
    let stalled = false;
    const stallTimer = setTimeout(() => {
      stalled = true;
      this.active -= 1;
      this.schedulePump();
    }, this.stalledAfterMs);
    try {
      const outcomes = await this.commit(batch.map(({ scope, message, options }) => ({ scope, message, options })));
      batch.forEach((entry, i) => entry.settle.resolve(outcomes[i]!));
    } catch (err) {
      for (const entry of batch) entry.settle.reject(err);
    } finally {
      clearTimeout(stallTimer);
      for (const entry of batch) this.roomsInFlight.delete(entry.roomKey);
      if (!stalled) this.active -= 1;
      this.inFlight -= 1;
      this.schedulePump();
    }
  }
}

interface Entry extends PendingAppend {
  roomKey: string;
  settle: Settle;
}

interface Settle {
  resolve(outcome: AppendOutcome): void;
  reject(err: unknown): void;
}
