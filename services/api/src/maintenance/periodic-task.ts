/**
 * Runs `work` every `intervalMs`, one run at a time: the next run is scheduled when the last one
 * settles, so a slow run is never overlapped by the next. A failed run goes to `onError` and the
 * schedule goes on. `stop` cancels the next run and waits for the one under way.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
    /** Whether a pending run keeps the process alive. @defaultValue true */
    private readonly holdsProcess = true,
  ) {}

  start(): void {
    const schedule = () => {
      const timer = setTimeout(tick, this.intervalMs);
      if (!this.holdsProcess) timer.unref();
      return timer;
    };
    const tick = () => {
      this.running = this.work()
        .then(() => undefined)
        .catch(this.onError)
        .finally(() => {
          if (this.timer !== undefined) this.timer = schedule();
        });
    };
    this.timer = schedule();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
