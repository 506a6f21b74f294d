import type { Logger } from '@chat/observability';
import type { AppendRateLimit, RateWindowRepository } from '@chat/store';
import { PeriodicTask } from './periodic-task.ts';

/**
 * Deletes the rows of ended append rate windows now and then, so the table holds about one
 * window's budgets rather than every budget ever used. Any number of API processes may sweep at
 * once: a sweep skips rows an append or another sweep holds. A pending sweep does not keep the
 * process alive.
 */
export function rateWindowSweeper(
  windows: RateWindowRepository,
  rate: AppendRateLimit,
  options: { logger: Logger; intervalMs: number; clock: () => Date },
): PeriodicTask {
  const { logger, intervalMs, clock } = options;
  return new PeriodicTask(intervalMs, () => windows.sweepEnded(rate, clock().getTime()), (err) => logger.warn({ err }, 'rate window sweep failed; retrying'), false);
}
