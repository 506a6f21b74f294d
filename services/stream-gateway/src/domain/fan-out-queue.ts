/**
 * Live deliveries, one event to every stream of its scope, run in arrival order but in slices of
 * at most `sliceSize` deliveries, each slice its own turn of the event loop. A room with thousands
 * of streams would otherwise hold the event loop for the whole of its fan-out (each delivery is a
 * socket write, ~10 µs): in a process that also serves appends (the all-in-one), every step of an
 * append queued behind it, its request, its core answer, its store and Redis replies, each waiting
 * up to one whole fan-out. Between slices the loop takes its I/O, so a step waits one slice at most.
 *
 * Order holds: jobs run strictly one after the other, so every stream gets a scope's events in the
 * order they were queued. Each job delivers to the streams its scope had when it was queued; a
 * stream that registers later takes the event from its snapshot instead (the scope's orderer counts
 * it as delivered when it queues it). A stream that closes meanwhile ignores what reaches it.
 */
export class FanOutQueue<S, E> {
  private readonly jobs: Array<{ targets: S[]; event: E; next: number }> = [];
  private head = 0;
  private running = false;
  private scheduled = false;

  constructor(
    private readonly deliver: (target: S, event: E) => void,
    /** Deliveries per slice. @defaultValue 256 */
    private readonly sliceSize = 256,
  ) {}

  /** Queues `event` for `targets` (copied now). Runs at once when nothing waits, up to one slice. */
  push(targets: Iterable<S>, event: E): void {
    this.jobs.push({ targets: Array.from(targets), event, next: 0 });
    if (!this.running && !this.scheduled) this.runSlice();
  }

  /** Deliveries queued and not yet made. */
  get backlog(): number {
    let n = 0;
    for (let i = this.head; i < this.jobs.length; i++) n += this.jobs[i]!.targets.length - this.jobs[i]!.next;
    return n;
  }

  private runSlice(): void {
    this.scheduled = false;
    this.running = true;
    let budget = this.sliceSize;
    try {
      while (this.head < this.jobs.length && budget > 0) {
        const job = this.jobs[this.head]!;
        const end = Math.min(job.targets.length, job.next + budget);
        budget -= end - job.next;
        // `next` moves before each delivery, so a delivery that throws is not made twice.
        while (job.next < end) this.deliver(job.targets[job.next++]!, job.event);
        if (job.next === job.targets.length) this.jobs[this.head++] = undefined as never;
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
        this.scheduled = true;
        setImmediate(() => this.runSlice());
      }
    }
  }
}
