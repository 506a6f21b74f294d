import type { WebhookLaneKey } from '@chat/store';

/** What a lane's run asks of the queue: nothing more now, or another run at `at`. */
export type LaneRunOutcome = { kind: 'settled' } | { kind: 'again'; at: Date };

export type LaneHandler = (key: WebhookLaneKey) => Promise<LaneRunOutcome>;

/**
 * Schedules lane runs. The store is the truth about what a lane has to deliver (a lane runs only
 * while it holds the lane's lease), so a queue may run a lane twice or late without harm; what it
 * adds is that runs are spread over the processes and that a retry's wait survives a restart.
 * BullMQ in Redis in the distributed deployment; the all-in-one, which has no Redis, schedules in
 * its own process, where the store's `next_attempt_at` carries the waits across a restart.
 */
export interface LaneQueue {
  /** Runs each lane after `delayMs` (at once by default); a lane already waiting to run is not queued twice. */
  enqueue(keys: readonly WebhookLaneKey[], delayMs?: number): Promise<void>;
  /** Starts running queued lanes with `handler`, at most `concurrency` at once. */
  start(handler: LaneHandler): void;
  /** Takes no more lanes and waits for the runs in hand. */
  stop(): Promise<void>;
}

export const laneName = (key: WebhookLaneKey) => `${key.webhookId}\u0000${key.inboxKey}`;

/** A {@link LaneQueue} in this process: one timer per waiting lane, and a lane queued while it runs runs again after. */
export class InProcessLaneQueue implements LaneQueue {
  private handler?: LaneHandler;
  private stopping = false;
  private readonly waiting = new Map<string, { key: WebhookLaneKey; at: number; timer: NodeJS.Timeout }>();
  private readonly running = new Map<string, { again: boolean }>();
  /** Lanes due, in the order they came due; a lane is here at most once. */
  private readonly ready = new Map<string, WebhookLaneKey>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly concurrency: number,
    private readonly onError: (err: unknown, key: WebhookLaneKey) => void,
  ) {}

  async enqueue(keys: readonly WebhookLaneKey[], delayMs = 0): Promise<void> {
    for (const key of keys) this.schedule(key, Date.now() + delayMs);
  }

  start(handler: LaneHandler): void {
    this.handler = handler;
    this.pump();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
    this.ready.clear();
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private schedule(key: WebhookLaneKey, at: number): void {
    if (this.stopping) return;
    const name = laneName(key);
    const running = this.running.get(name);
    if (running) {
      running.again = true;
      return;
    }
    // Already due: it runs as soon as a slot is free, which is no later than `at`.
    if (this.ready.has(name)) return;
    const waiting = this.waiting.get(name);
    if (waiting && waiting.at <= at) return;
    if (waiting) clearTimeout(waiting.timer);
    const timer = setTimeout(() => {
      this.waiting.delete(name);
      this.ready.set(name, key);
      this.pump();
    }, Math.max(0, at - Date.now()));
    timer.unref();
    this.waiting.set(name, { key, at, timer });
  }

  private pump(): void {
    while (this.handler && !this.stopping && this.inFlight.size < this.concurrency && this.ready.size > 0) {
      const [name, key] = this.ready.entries().next().value!;
      this.ready.delete(name);
      const state = { again: false };
      this.running.set(name, state);
      const run = this.run(this.handler, key, state).finally(() => {
        this.running.delete(name);
        this.inFlight.delete(run);
        this.pump();
      });
      this.inFlight.add(run);
    }
  }

  private async run(handler: LaneHandler, key: WebhookLaneKey, state: { again: boolean }): Promise<void> {
    let next: number | undefined;
    try {
      const outcome = await handler(key);
      if (outcome.kind === 'again') next = outcome.at.getTime();
    } catch (err) {
      this.onError(err, key);
      next = Date.now() + 1000;
    }
    this.running.delete(laneName(key));
    if (state.again) this.schedule(key, Date.now());
    else if (next !== undefined) this.schedule(key, next);
  }
}
