/**
 * Live deliveries, one event to every stream of its scope, run in arrival order but in slices of
 * at most `sliceSize` deliveries, each slice its own turn of the event loop. A room with thousands
 * of streams would otherwise hold the event loop for the whole of its fanout (each delivery is a
 * socket write, ~10 µs): in a process that also serves appends (the all-in-one), every step of an
 * append queued behind it, its request, its core answer, its store and Redis replies, each waiting
 * up to one whole fanout. Between slices the loop takes its I/O, so a step waits one slice at most.
 *
 * Order holds: jobs run strictly one after the other, so every stream gets a scope's events in the
 * order they were queued. Each job delivers to the streams its scope had when it was queued; a
 * stream that registers later takes the event from its snapshot instead (the scope's orderer counts
 * it as delivered when it queues it). A stream that closes meanwhile ignores what reaches it.
 *
 * The backlog is bounded: once more than `maxBacklog` deliveries wait, a push delivers everything at
 * once, as an unsliced fanout would. A process that cannot keep up then stops reading the backbone
 * while it writes, instead of queueing events in memory without end.
 */
export class FanoutQueue<S, E> {
  private readonly jobs: Array<{ targets: S[]; event: E; next: number }> = [];
  private head = 0;
  private pending = 0;
  private running = false;
  private scheduled = false;

  constructor(
    private readonly deliver: (target: S, event: E) => void,
    /** Deliveries per slice. @defaultValue 256 */
    private readonly sliceSize = 256,
    /** Deliveries that may wait before a push delivers them all at once. @defaultValue 16 slices */
    private readonly maxBacklog = sliceSize * 16,
    /** Told when an event has gone to every one of its targets (once per push). @defaultValue none */
    private readonly settled?: (event: E, targets: readonly S[]) => void,
  ) {}

  /** Queues `event` for `targets` (copied now) and delivers at once what the rules above allow. */
  push(targets: Iterable<S>, event: E): void {
    const job = { targets: Array.from(targets), event, next: 0 };
    if (job.targets.length === 0) return;
    this.jobs.push(job);
    this.pending += job.targets.length;
    if (this.running) return;
    if (this.pending > this.maxBacklog) this.run(Infinity);
    else if (!this.scheduled) this.run(this.sliceSize);
  }

  /** Deliveries queued and not yet made. */
  get backlog(): number {
    return this.pending;
  }

  private run(budget: number): void {
    this.running = true;
    try {
      while (this.head < this.jobs.length && budget > 0) {
        const job = this.jobs[this.head]!;
        const end = Math.min(job.targets.length, job.next + budget);
        budget -= end - job.next;
        // `next` and the count move before each delivery, so a delivery that throws is not made twice.
        while (job.next < end) {
          this.pending -= 1;
          this.deliver(job.targets[job.next++]!, job.event);
        }
        if (job.next === job.targets.length) {
          this.jobs[this.head++] = undefined as never;
          this.settled?.(job.event, job.targets);
        }
      }
    } finally {
      this.running = false;
      if (this.head === this.jobs.length) {
        this.jobs.length = 0;
        this.head = 0;
      } else {
        if (this.head > 1024) {
          this.jobs.splice(0, this.head);
          this.head = 0;
        }
        if (!this.scheduled) {
          this.scheduled = true;
          setImmediate(() => {
            this.scheduled = false;
            this.run(this.sliceSize);
          });
        }
      }
    }
  }
}
