import { and, asc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { ChatDb, DatabaseTarget } from './database.ts';
import { DELETE_OUTBOX } from './message-sql.ts';
import { rowsOf } from './sql-script.ts';
import { messageColumns, messages, outbox, type MessageRow, type OutboxRow } from './schema.ts';
import type { SqlClient } from './sql-client.ts';
import { storeCall } from './store-errors.ts';

/**
 * An outbox entry: its stored payload (the backbone event's data), or, for a `messages` entry,
 * which the append statement stores without one, its message (whose MessageResponse JSON is the data).
 */
export type OutboxEntry = Omit<OutboxRow, 'payload'> & ({ payload: string; message: null } | { payload: null; message: MessageRow });

/** What a relay may do while it holds the relay turn (see `OutboxRepository.duringRelayTurn`). */
export interface OutboxRelayTurn {
  /** As `OutboxRepository.listStale`, inside the turn's transaction. */
  listStale(olderThan: Date, limit: number): Promise<OutboxEntry[]>;
  /** Removes published entries; they are gone when the turn ends (its transaction commits). */
  remove(ids: number[]): Promise<void>;
}

export interface OutboxRepository {
  /**
   * Runs `work` as the only relay of the whole deployment: in one transaction holding a
   * transaction-scoped advisory lock, so relays of several API processes take turns instead of
   * publishing the same entries side by side (out of order, and each twice). Resolves `undefined`
   * at once, without running `work`, when another relay holds the turn. If `work` throws, nothing
   * it removed is removed. A relay that dies mid-turn ends its transaction, and so its turn.
   * An embedded database (PGlite) belongs to one process and so has one relay: its turn is `work`
   * run as it is, since a transaction would hold the database's only connection (and every append
   * behind it) across the publish.
   */
  duringRelayTurn<T>(work: (turn: OutboxRelayTurn) => Promise<T>): Promise<T | undefined>;
  /**
   * Entries older than `olderThan`, oldest first: the ones nobody published right after commit.
   * A `messages` entry comes with its message (the append statement stores no payload).
   */
  listStale(olderThan: Date, limit: number): Promise<OutboxEntry[]>;
  /** Removes published entries. Removing an entry twice is harmless. */
  remove(ids: number[]): Promise<void>;
  /** How many entries wait, for the outbox-depth metric. */
  depth(): Promise<number>;
}

export function createOutboxRepository(db: ChatDb, raw: SqlClient, kind: DatabaseTarget['kind']): OutboxRepository {
  const listStale = (olderThan: Date, limit: number) => storeCall(() => listStaleOn(db, olderThan, limit));
  const remove = (ids: number[]) =>
    storeCall(async () => {
      if (ids.length > 0) await raw.query(DELETE_OUTBOX, [JSON.stringify(ids)]);
    });
  return {
    listStale,
    remove,
    duringRelayTurn: (work) => (kind === 'pglite' ? work({ listStale, remove }) : storeCall(() => relayTurnOnPostgres(db, work))),
    depth: () =>
      storeCall(async () => {
        const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(outbox);
        return row?.n ?? 0;
      }),
  };
}

/** The relay turn on a shared PostgreSQL: one transaction, entered only if its advisory lock is free. */
function relayTurnOnPostgres<T>(db: ChatDb, work: (turn: OutboxRelayTurn) => Promise<T>): Promise<T | undefined> {
  return db.transaction(async (tx) => {
    const [turn] = rowsOf<{ acquired: boolean }>(await tx.execute(sql`SELECT pg_try_advisory_xact_lock(${RELAY_LOCK_ID}) AS acquired`));
    if (!turn?.acquired) return undefined;
    return work({
      listStale: (olderThan, limit) => listStaleOn(tx, olderThan, limit),
      remove: async (ids) => {
        if (ids.length > 0) await tx.delete(outbox).where(inArray(outbox.id, ids));
      },
    });
  });
}

/** Arbitrary constant shared by every API process: the advisory lock of the relay turn. */
const RELAY_LOCK_ID = 7_216_530_114;

type Queryable = Pick<ChatDb, 'select'>;

async function listStaleOn(db: Queryable, olderThan: Date, limit: number): Promise<OutboxEntry[]> {
  const rows = await db
    .select({ entry: outbox, message: messageColumns })
    .from(outbox)
    .leftJoin(messages, and(eq(outbox.channel, 'messages'), isNull(outbox.payload), eq(messages.roomId, outbox.scopeKey), eq(messages.seq, outbox.seq)))
    .where(lt(outbox.createdAt, olderThan))
    .orderBy(asc(outbox.id))
    .limit(limit);
  return rows.map(({ entry, message }): OutboxEntry => {
    if (entry.payload !== null) return { ...entry, payload: entry.payload, message: null };
    // Written in the message's own transaction, so the message is there.
    if (!message) throw new Error(`outbox entry ${entry.id} has neither payload nor message`);
    return { ...entry, payload: null, message };
  });
}
