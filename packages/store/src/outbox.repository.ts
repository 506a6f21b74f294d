import { asc, lt, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { DELETE_OUTBOX } from './message-sql.ts';
import { outbox, type OutboxRow } from './schema.ts';
import type { SqlClient } from './sql-client.ts';
import { storeCall } from './store-errors.ts';

export interface OutboxRepository {
  /** Entries older than `olderThan`, oldest first: the ones nobody published right after commit. */
  listStale(olderThan: Date, limit: number): Promise<OutboxRow[]>;
  /** Removes published entries. Removing an entry twice is harmless. */
  remove(ids: number[]): Promise<void>;
  /** How many entries wait, for the outbox-depth metric. */
  depth(): Promise<number>;
}

export function createOutboxRepository(db: ChatDb, raw: SqlClient): OutboxRepository {
  return {
    listStale: (olderThan, limit) =>
      storeCall(() => db.select().from(outbox).where(lt(outbox.createdAt, olderThan)).orderBy(asc(outbox.id)).limit(limit)),
    remove: (ids) =>
      storeCall(async () => {
        if (ids.length > 0) await raw.query(DELETE_OUTBOX, [JSON.stringify(ids)]);
      }),
    depth: () =>
      storeCall(async () => {
        const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(outbox);
        return row?.n ?? 0;
      }),
  };
}
