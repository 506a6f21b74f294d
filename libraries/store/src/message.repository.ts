import { Batcher } from '@chat/batching';
import { and, asc, desc, eq, gt, lt } from 'drizzle-orm';
import { AppendBatcher, type AppendBatcherOptions } from './append-batcher.ts';
import type { AppendOptions, AppendOutcome, NewMessage } from './message-append.types.ts';
import type { ChatDb } from './database.ts';
import { appendBatch, ensureRooms } from './message-append.ts';
import { FIND_BY_IDEMPOTENCY_KEYS, messageRowFromSql, type RawMessageRow } from './message-sql.ts';
import type { SqlClient } from './sql-client.ts';
import { roomScopeKey, type RoomScope } from './room.repository.ts';
import { messages, type MessageRow } from './schema.ts';
import { storeCall } from './store-errors.ts';

export interface MessageRepository {
  /**
   * Appends one message atomically: the room (created on first append), its counters, the message
   * and its outbox entry commit together. The outbox entry carries no payload: the backbone payload
   * of a message is its MessageResponse JSON, which the publisher makes from the returned row and
   * the relay from the stored one. Appends to a room are serialized on the room row, which
   * makes the per-room seq contiguous and (createdAt, messageId) follow commit order.
   */
  append(scope: RoomScope, message: NewMessage, options: AppendOptions): Promise<AppendOutcome>;
  findByIdempotencyKey(scope: RoomScope, senderKind: 'user' | 'bot', senderId: string, key: string): Promise<MessageRow | null>;
  /** Messages of a room with seq greater than `afterSeq`, oldest first. */
  listAfter(roomId: string, afterSeq: number, limit: number): Promise<MessageRow[]>;
  /**
   * The last `limit` messages of a room with seq less than `beforeSeq`, returned oldest first. One
   * backward range scan of the (room_id, seq) primary key, so its cost is the page's, whatever the
   * room's size or the position.
   */
  listBefore(roomId: string, beforeSeq: number, limit: number): Promise<MessageRow[]>;
}

export function createMessageRepository(db: ChatDb, sql: SqlClient, batching: AppendBatcherOptions = {}): MessageRepository {
  const knownRooms = new KnownRooms();
  const batcher = new AppendBatcher(async (items) => {
    const unknown = items.filter((item) => !knownRooms.has(roomScopeKey(item.scope)));
    if (unknown.length > 0) await ensureRooms(sql, unknown);
    const outcomes = await appendBatch(sql, items);
    for (const item of unknown) knownRooms.add(roomScopeKey(item.scope));
    return outcomes;
  }, batching);
  // Every append first looks for an earlier one with its key: a lone lookup goes out at once, and
  // under load one query answers the lookups that queued behind the two running.
  const lookups = new Batcher<{ scopeKey: string; senderKind: string; senderId: string; key: string }, MessageRow | null>(
    async (inputs) => {
      const keys = inputs.map((k, ord) => ({ ord, scope_key: k.scopeKey, sender_kind: k.senderKind, sender_id: k.senderId, idempotency_key: k.key }));
      const rows = await sql.query<RawMessageRow & { ord: number }>(FIND_BY_IDEMPOTENCY_KEYS, [JSON.stringify(keys)]);
      const found: Array<MessageRow | null> = inputs.map(() => null);
      for (const row of rows) found[row.ord] = messageRowFromSql(row);
      return found;
    },
    { maxBatch: 64, maxConcurrent: 2 },
  );
  return {
    append: (scope, message, options) => storeCall(() => batcher.submit({ scope, message, options })),
    findByIdempotencyKey: (scope, senderKind, senderId, key) =>
      storeCall(() => lookups.submit({ scopeKey: roomScopeKey(scope), senderKind, senderId, key })),
    listAfter: (roomId, afterSeq, limit) =>
      storeCall(() =>
        db
          .select()
          .from(messages)
          .where(and(eq(messages.roomId, roomId), gt(messages.seq, afterSeq)))
          .orderBy(asc(messages.seq))
          .limit(limit),
      ),
    listBefore: (roomId, beforeSeq, limit) =>
      storeCall(async () => {
        const rows = await db
          .select()
          .from(messages)
          .where(and(eq(messages.roomId, roomId), lt(messages.seq, beforeSeq)))
          .orderBy(desc(messages.seq))
          .limit(limit);
        return rows.reverse();
      }),
  };
}


/**
 * Scope keys of rooms this process has seen exist, so appends skip the create-if-missing statement.
 * Rooms are never deleted. Bounded: when full it starts over, which only costs a few harmless
 * `ON CONFLICT DO NOTHING` inserts.
 */
class KnownRooms {
  private keys = new Set<string>();
  constructor(private readonly max = 100_000) {}
  has(key: string): boolean {
    return this.keys.has(key);
  }
  add(key: string): void {
    if (this.keys.size >= this.max) this.keys = new Set();
    this.keys.add(key);
  }
}
