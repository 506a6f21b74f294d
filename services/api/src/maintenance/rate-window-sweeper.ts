import type { Logger } from '@chat/observability';
import type { AppendRateWindow } from '../domain/append-rate-window.ts';

/**
 * Deletes the rows of ended append rate windows now and then, so the table holds about one
 * window's budgets rather than every budget ever used. Any number of API processes may sweep at
 * once: a sweep skips rows an append or another sweep holds.
 */
export class RateWindowSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly rateWindow: AppendRateWindow,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly clock: () => Date,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.rateWindow
        .sweep(this.clock().getTime())
        .then(() => undefined)
        .catch((err: unknown) => this.logger.warn({ err }, 'rate window sweep failed; retrying'))
        .finally(() => {
          if (this.timer !== undefined) this.timer = setTimeout(tick, this.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, this.intervalMs).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
