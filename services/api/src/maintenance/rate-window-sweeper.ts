import type { Logger } from '@chat/observability';
import type { AppendRateWindow } from '../domain/append-rate-window.ts';
import { PeriodicTask } from './periodic-task.ts';

/**
 * Deletes the rows of ended append rate windows now and then, so the table holds about one
 * window's budgets rather than every budget ever used. Any number of API processes may sweep at
 * once: a sweep skips rows an append or another sweep holds. A pending sweep does not keep the
 * process alive.
 */
export function rateWindowSweeper(rateWindow: AppendRateWindow, logger: Logger, intervalMs: number, clock: () => Date): PeriodicTask {
  return new PeriodicTask(intervalMs, () => rateWindow.sweep(clock().getTime()), (err) => logger.warn({ err }, 'rate window sweep failed; retrying'), false);
}
