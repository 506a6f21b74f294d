import { windowStartAt, type AppendRateBudget, type AppendRateLimit } from './append-rate-window.ts';
import { RETURN_RATE_UNIT, SWEEP_RATE_WINDOWS, TAKE_RATE_UNIT } from './message-sql.ts';
import type { SqlClient } from './sql-client.ts';
import { storeCall } from './store-errors.ts';

/**
 * The append rate windows (table `append_rate_windows`, its functions in `sql/functions/`) outside
 * an append statement: a held unit given back, and the sweep of ended windows. An append's units are
 * taken by the append statement itself; other operations that cost the service (search) take units
 * of budgets of their own here, with room keys no room has.
 */
export interface RateWindowRepository {
  /** Takes one unit of `budget` in its window: false when the budget is spent. */
  take(budget: AppendRateBudget): Promise<boolean>;
  /** Gives a unit back to the window it was taken in; nothing once that window has ended. */
  giveBack(budget: Omit<AppendRateBudget, 'limit'>): Promise<void>;
  /**
   * Deletes the rows of windows that ended before the window holding `nowMs`, a batch at a time,
   * skipping rows an append holds; returns how many went.
   */
  sweepEnded(rate: Pick<AppendRateLimit, 'windowSeconds'>, nowMs: number, batch?: number): Promise<number>;
}

export function createRateWindowRepository(sql: SqlClient): RateWindowRepository {
  const sweepBatch = (beforeMs: number, limit: number) =>
    storeCall(async () => {
      const rows = await sql.query<{ swept: string | number }>(SWEEP_RATE_WINDOWS, [beforeMs, limit]);
      return Number(rows[0]?.swept ?? 0);
    });
  return {
    take: (b) =>
      storeCall(async () => {
        const rows = await sql.query<{ taken: boolean | null }>(TAKE_RATE_UNIT, [b.senderKind, b.senderId, b.roomKey, b.windowStartMs, b.limit]);
        return rows[0]?.taken === true;
      }),
    giveBack: (b) =>
      storeCall(async () => {
        await sql.query(RETURN_RATE_UNIT, [b.senderKind, b.senderId, b.roomKey, b.windowStartMs]);
      }),
    async sweepEnded(rate, nowMs, batch = 10_000) {
      const before = windowStartAt(rate, nowMs);
      let total = 0;
      for (;;) {
        const swept = await sweepBatch(before, batch);
        total += swept;
        if (swept < batch) return total;
      }
    },
  };
}
