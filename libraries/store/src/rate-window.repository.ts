import type { AppendRateBudget } from './message-append.types.ts';
import { RETURN_RATE_UNIT, SWEEP_RATE_WINDOWS, TAKE_RATE_UNIT } from './message-sql.ts';
import type { SqlClient } from './sql-client.ts';
import { storeCall } from './store-errors.ts';

/**
 * The append rate windows (table `append_rate_windows`, its functions in `sql/functions/`) outside
 * an append: the unit an append with mentions takes before core is asked about them, its return,
 * and the sweep of ended windows. A plain append takes its unit inside its own statement
 * (`AppendOptions.rate`).
 */
export interface RateWindowRepository {
  /** Takes one unit of `budget`'s window; false when the budget is spent. */
  take(budget: AppendRateBudget): Promise<boolean>;
  /** Gives a unit back to the window it was taken in; nothing once that window has ended. */
  giveBack(budget: Omit<AppendRateBudget, 'limit'>): Promise<void>;
  /**
   * Deletes up to `limit` rows of windows that started before `beforeMs`, skipping rows an append
   * holds; returns how many went.
   */
  sweep(beforeMs: number, limit: number): Promise<number>;
}

export function createRateWindowRepository(sql: SqlClient): RateWindowRepository {
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
    sweep: (beforeMs, limit) =>
      storeCall(async () => {
        const rows = await sql.query<{ swept: string | number }>(SWEEP_RATE_WINDOWS, [beforeMs, limit]);
        return Number(rows[0]?.swept ?? 0);
      }),
  };
}
