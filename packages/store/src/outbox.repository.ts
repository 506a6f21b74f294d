import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { toMessageResponse } from './message.presenter.ts';
import { DELETE_OUTBOX } from './message-sql.ts';
import { messages, outbox, type OutboxRow } from './schema.ts';
import type { SqlClient } from './sql-client.ts';
import { storeCall } from './store-errors.ts';

/** An outbox entry with the data its backbone event carries. */
export interface OutboxEntry extends Omit<OutboxRow, 'payload'> {
  payload: string;
}

export interface OutboxRepository {
  /**
   * Entries older than `olderThan`, oldest first: the ones nobody published right after commit.
   * A `messages` entry's payload is its message's MessageResponse JSON, read from the message
   * itself (the append statement stores none).
   */
  listStale(olderThan: Date, limit: number): Promise<OutboxEntry[]>;
  /** Removes published entries. Removing an entry twice is harmless. */
  remove(ids: number[]): Promise<void>;
  /** How many entries wait, for the outbox-depth metric. */
  depth(): Promise<number>;
}

export function createOutboxRepository(db: ChatDb, raw: SqlClient): OutboxRepository {
  return {
    listStale: (olderThan, limit) =>
      storeCall(async () => {
        const rows = await db
          .select({ entry: outbox, message: messages })
          .from(outbox)
          .leftJoin(
            messages,
            and(eq(outbox.channel, 'messages'), isNull(outbox.payload), eq(messages.roomId, outbox.scopeKey), eq(messages.seq, outbox.seq)),
          )
          .where(lt(outbox.createdAt, olderThan))
          .orderBy(asc(outbox.id))
          .limit(limit);
        return rows.map(({ entry, message }) => {
          if (entry.payload !== null) return { ...entry, payload: entry.payload };
          // Written in the message's own transaction, so the message is there.
          if (!message) throw new Error(`outbox entry ${entry.id} has neither payload nor message`);
          return { ...entry, payload: JSON.stringify(toMessageResponse(message)) };
        });
      }),
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
