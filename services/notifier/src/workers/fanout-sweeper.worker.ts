import type { Logger } from '@chat/observability';
import type { Store } from '@chat/store';
import type { FanoutProcessor } from './fanout-processor.ts';

export interface FanoutSweeperSettings {
  /** Pause between sweeps. @defaultValue 1000 */
  intervalMs: number;
  /** Rows younger than this are left to the backbone path. @defaultValue 5000 */
  graceMs: number;
  /** Rows claimed per sweep. @defaultValue 100 */
  batchSize: number;
  /** Rows run at once. @defaultValue 8 */
  concurrency: number;
  /** How long a claim keeps other workers off a row (the processor's lease). @defaultValue 30000 */
  leaseMs: number;
}

/**
 * The path that does not depend on Redis: claims fanout rows nobody finished (the event was lost,
 * the worker crashed, a retry is due) and runs them. It claims room heads only (a room's earliest
 * pending row) and runs each room's rows behind its head in order; a head goes to one claimer only,
 * so any number of notifier processes sweep side by side.
 */
export class FanoutSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly processor: FanoutProcessor,
    private readonly settings: FanoutSweeperSettings,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.sweep()
        .then(() => undefined)
        .catch((err: unknown) => this.logger.warn({ err }, 'fanout sweep failed; retrying'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.settings.intervalMs);
        });
    };
    this.timer = setTimeout(tick, this.settings.intervalMs);
  }

  /** Claims and runs due room heads (and the rows behind them) until none is left or stopping; returns how many heads it claimed. */
  async sweep(): Promise<number> {
    let total = 0;
    while (!this.stopped) {
      const rows = await this.store.mentionFanout.claimDue({
        now: this.clock(),
        graceMs: this.settings.graceMs,
        leaseMs: this.settings.leaseMs,
        limit: this.settings.batchSize,
      });
      if (rows.length === 0) break;
      let next = 0;
      const lane = async () => {
        // Claimed rows are run even when stopping starts: leaving them would only delay them a lease.
        while (next < rows.length) {
          const row = rows[next++]!;
          // A room's rows behind its head run in this lane too, up to a batch of them: a busy room
          // must not hold a lane for ever while other rooms' heads wait (its next head is due at once).
          let budget = this.settings.batchSize;
          const more = () => !this.stopped && budget-- > 0;
          // The store failed while settling: the row's lease lapses and it comes back.
          await this.processor.processRoom(row, 'sweeper', more).catch((err: unknown) => this.logger.warn({ err, messageId: row.messageId }, 'fanout not settled'));
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.settings.concurrency, rows.length) }, lane));
      total += rows.length;
      if (rows.length < this.settings.batchSize) break;
    }
    return total;
  }

  /** Stops sweeping after the rows in hand are settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
