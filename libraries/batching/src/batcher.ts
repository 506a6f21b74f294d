import { BatchDeadlineError, BatchQueueFullError } from './batcher-errors.ts';

/**
 * Runs one batch: one output per item, in order. An Error in place of an output fails only that
 * item; a throw (or a rejection) fails every item of the batch.
 */
type BatchRunner<I, O> = (items: I[]) => Promise<ReadonlyArray<O | Error>>;

export interface BatcherOptions<I> {
  /** Most items one batch carries. @defaultValue 64 */
  maxBatch?: number;
  /** Batches running at once, not counting stalled ones; beyond that items queue. @defaultValue 1 */
  maxConcurrent?: number;
  /**
   * A batch still running after this long is stalled: it stops holding its lane, so one slow batch
   * does not hold up every item queued behind it. @defaultValue Infinity (batches never stall)
   */
  stalledAfterMs?: number;
  /** Batches running at once, stalled ones included. Never below `maxConcurrent`. @defaultValue maxConcurrent */
  maxInFlight?: number;
  /**
   * Start a batch only after the current event-loop turn, so that every item submitted in it joins,
   * even when no batch is running for them to queue behind. @defaultValue false
   */
  startOnNextTurn?: boolean;
  /**
   * Serializes items per key: items of a key are in at most one running batch, and leave the queue
   * in arrival order. Items of other keys pass them. @defaultValue none (no per-key rule)
   */
  keyOf?: (item: I) => string;
  /** Most items waiting for a lane; beyond it `submit` fails at once with `queueFullError`. @defaultValue Infinity */
  maxQueued?: number;
  /**
   * Longest time from `submit` to an answer, queueing and running together: past it the caller gets
   * `deadlineError`, whether its item still waits (it is dropped from the queue) or rides a batch
   * that has not returned (its output is ignored). @defaultValue Infinity
   */
  deadlineMs?: number;
  /** The error of an item refused by `maxQueued`. @defaultValue a BatchQueueFullError */
  queueFullError?: (maxQueued: number) => Error;
  /** The error of an item past `deadlineMs`. @defaultValue a BatchDeadlineError */
  deadlineError?: (deadlineMs: number) => Error;
}

interface Entry<I, O> {
  item: I;
  key: string | undefined;
  resolve(output: O): void;
  reject(err: unknown): void;
  settled: boolean;
  deadline: NodeJS.Timeout | undefined;
}

/**
 * Coalesces concurrent work into few calls. While fewer than `maxConcurrent` batches run, an item
 * goes out at once (alone, unless `startOnNextTurn` gathers its turn); beyond that items queue, and
 * the next batch takes the oldest `maxBatch` of them. At low load that keeps each item's latency;
 * under load one call carries many. Every caller gets its own output or error.
 */
export class Batcher<I, O> {
  private queue: Array<Entry<I, O>> = [];
  private readonly keysInFlight = new Set<string>();
  /** Batches holding a lane (running and not stalled). */
  private active = 0;
  private running = 0;
  private pumpScheduled = false;
  private readonly maxBatch: number;
  private readonly maxConcurrent: number;
  private readonly stalledAfterMs: number;
  private readonly maxInFlight: number;
  private readonly startOnNextTurn: boolean;
  private readonly keyOf: ((item: I) => string) | undefined;
  private readonly maxQueued: number;
  private readonly deadlineMs: number;
  private readonly queueFullError: (maxQueued: number) => Error;
  private readonly deadlineError: (deadlineMs: number) => Error;
  /** The longest the queue has been since the last {@link takePeakQueued}. */
  private peakQueued = 0;

  constructor(
    private readonly runBatch: BatchRunner<I, O>,
    options: BatcherOptions<I> = {},
  ) {
    this.maxBatch = options.maxBatch ?? 64;
    this.maxConcurrent = options.maxConcurrent ?? 1;
    this.stalledAfterMs = options.stalledAfterMs ?? Infinity;
    this.maxInFlight = Math.max(this.maxConcurrent, options.maxInFlight ?? this.maxConcurrent);
    this.startOnNextTurn = options.startOnNextTurn ?? false;
    this.keyOf = options.keyOf;
    this.maxQueued = options.maxQueued ?? Infinity;
    this.deadlineMs = options.deadlineMs ?? Infinity;
    this.queueFullError = options.queueFullError ?? ((max) => new BatchQueueFullError(max));
    this.deadlineError = options.deadlineError ?? ((ms) => new BatchDeadlineError(ms));
    for (const [name, value] of [['maxBatch', this.maxBatch], ['maxConcurrent', this.maxConcurrent]] as const) {
      if (!(value >= 1)) throw new RangeError(`${name} must be at least 1, got ${value}`);
    }
  }

  /** Items waiting for a lane. */
  get queued(): number {
    return this.queue.length;
  }

  /** Batches running, stalled ones included. */
  get inFlight(): number {
    return this.running;
  }

  /** Most items that may wait for a lane (`maxQueued`). */
  get queueBound(): number {
    return this.maxQueued;
  }

  /**
   * The most items that waited for a lane at once since the previous call (at least those waiting
   * now), and the next reading starts from now: a periodic reader sees the bursts between its
   * readings, which the queue's length at the moment of reading would miss.
   */
  takePeakQueued(): number {
    const peak = Math.max(this.peakQueued, this.queue.length);
    this.peakQueued = this.queue.length;
    return peak;
  }

  submit(item: I): Promise<O> {
    if (this.queue.length >= this.maxQueued) return Promise.reject(this.queueFullError(this.maxQueued));
    return new Promise<O>((resolve, reject) => {
      const entry: Entry<I, O> = { item, key: this.keyOf?.(item), resolve, reject, settled: false, deadline: undefined };
      if (this.deadlineMs !== Infinity) entry.deadline = setTimeout(() => this.expire(entry), this.deadlineMs);
      this.queue.push(entry);
      this.schedulePump();
      // After the pump: an item that went out at once did not wait.
      if (this.queue.length > this.peakQueued) this.peakQueued = this.queue.length;
    });
  }

  private expire(entry: Entry<I, O>): void {
    if (entry.settled) return;
    const at = this.queue.indexOf(entry);
    if (at >= 0) this.queue.splice(at, 1);
    this.settle(entry, this.deadlineError(this.deadlineMs));
  }

  private settle(entry: Entry<I, O>, outcome: O | Error, failed = outcome instanceof Error): void {
    if (entry.settled) return;
    entry.settled = true;
    clearTimeout(entry.deadline);
    if (failed) entry.reject(outcome);
    else entry.resolve(outcome as O);
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
    while (this.active < this.maxConcurrent && this.running < this.maxInFlight && this.queue.length > 0) {
      const batch = this.takeBatch();
      if (batch.length === 0) return;
      void this.run(batch);
    }
  }

  /** The oldest queued items whose keys are not in a running batch, in queue order. */
  private takeBatch(): Array<Entry<I, O>> {
    if (this.keyOf === undefined) return this.queue.splice(0, this.maxBatch);
    const batch: Array<Entry<I, O>> = [];
    const rest: Array<Entry<I, O>> = [];
    const taken = new Set<string>();
    for (const entry of this.queue) {
      if (batch.length < this.maxBatch && !this.keysInFlight.has(entry.key!)) {
        batch.push(entry);
        taken.add(entry.key!);
      } else {
        rest.push(entry);
      }
    }
    for (const key of taken) this.keysInFlight.add(key);
    this.queue = rest;
    return batch;
  }

  private async run(batch: Array<Entry<I, O>>): Promise<void> {
    this.active += 1;
    this.running += 1;
    let stalled = false;
    const stallTimer =
      this.stalledAfterMs === Infinity
        ? undefined
        : setTimeout(() => {
            stalled = true;
            this.active -= 1;
            this.schedulePump();
          }, this.stalledAfterMs);
    try {
      const outputs = await this.runBatch(batch.map((entry) => entry.item));
      batch.forEach((entry, i) => {
        if (i < outputs.length) this.settle(entry, outputs[i]!);
        else this.settle(entry, new Error(`the batch answered ${outputs.length} of ${batch.length} items`));
      });
    } catch (err) {
      for (const entry of batch) this.settle(entry, err as O | Error, true);
    } finally {
      clearTimeout(stallTimer);
      if (this.keyOf !== undefined) for (const entry of batch) this.keysInFlight.delete(entry.key!);
      if (!stalled) this.active -= 1;
      this.running -= 1;
      this.schedulePump();
    }
  }
}
