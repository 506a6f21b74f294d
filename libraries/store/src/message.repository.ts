import { and, asc, desc, eq, gt, lt } from 'drizzle-orm';
import { startCommitSpan, type CommitSpan } from '@chat/tracing';
import { AppendBatcher, type AppendBatcherOptions } from './append-batcher.ts';
import { placeBudget } from './append-rate-window.ts';
import type { AppendHold, AppendOptions, AppendOutcome, HoldOutcome, NewMessage, PendingAppend, StepOutcome } from './message-append.types.ts';
import type { ChatDb } from './database.ts';
import { appendBatch, ensureRooms } from './message-append.ts';
import { searchMessages, type MessageSearchQuery, type SearchPage } from './message-search.ts';
import type { RateWindowRepository } from './rate-window.repository.ts';
import type { SqlClient } from './sql-client.ts';
import { roomScopeKey, type RoomScope } from './room.repository.ts';
import { messageColumns, messages, type MessageRow } from './schema.ts';
import { storeCall } from './store-errors.ts';

/**
 * Where a message is appended, and the one place that decides an append's idempotency and counts
 * its rate unit: both happen in the append statement (`sql/functions/chat_append_messages_v4.sql`).
 */
export interface MessageRepository {
  /**
   * Appends one message atomically: the room (created on first append), its counters, the message
   * and its outbox entry commit together, and the append takes its unit of `options.rateLimit` in the
   * same transaction (none for a replay, a sealed room or a held unit). An exact retry is answered
   * with the stored message however the room and the budget changed since. The outbox entry carries
   * no payload: the backbone payload of a message is its MessageResponse JSON, which the publisher
   * makes from the returned row and the relay from the stored one. Appends to a room are serialized
   * on the room row, which makes the per-room seq contiguous and (createdAt, messageId) follow
   * commit order.
   */
  append(scope: RoomScope, message: NewMessage, options: AppendOptions): Promise<AppendOutcome>;
  /**
   * The first step of an append that checks more before it is stored: answers an exact retry, a
   * sealed room or a spent budget as `append` would, or else takes the rate unit and answers `held`.
   * The caller then appends with `options.hold`, or releases the hold.
   */
  hold(scope: RoomScope, message: NewMessage, options: Omit<AppendOptions, 'hold'>): Promise<HoldOutcome>;
  /** Messages of a room with seq greater than `afterSeq`, oldest first. */
  listAfter(roomId: string, afterSeq: number, limit: number): Promise<MessageRow[]>;
  /**
   * The last `limit` messages of a room with seq less than `beforeSeq`, returned oldest first. One
   * backward range scan of the (room_id, seq) primary key, so its cost is the page's, whatever the
   * room's size or the position.
   */
  listBefore(roomId: string, beforeSeq: number, limit: number): Promise<MessageRow[]>;
  /**
   * Messages of a repository, or of one of its rooms, that match `query` (message-search.ts), a page
   * in the query's order; SearchTimeoutError past the query's time bound.
   */
  search(query: MessageSearchQuery): Promise<SearchPage>;
}

export function createMessageRepository(db: ChatDb, sql: SqlClient, rateWindows: RateWindowRepository, batching: AppendBatcherOptions = {}): MessageRepository {
  const knownRooms = new KnownRooms();
  const batcher = new AppendBatcher(async (items) => {
    for (const item of items) item.commit?.transactionStarted(items.length);
    // An append core calls sealed never creates its room (a room nobody wrote to stays virtual).
    const unknown = items.filter((item) => !item.options.sealedByCore && !knownRooms.has(roomScopeKey(item.scope)));
    if (unknown.length > 0) await ensureRooms(sql, unknown);
    const outcomes = await appendBatch(sql, items);
    for (const item of unknown) knownRooms.add(roomScopeKey(item.scope));
    return outcomes;
  }, batching);
  // A held unit counts in the window it was taken in, whenever the append follows.
  const budgetOf = (scope: RoomScope, message: NewMessage, options: AppendOptions): PendingAppend['budget'] =>
    options.hold ? options.hold.budget : options.rateLimit && placeBudget(options.rateLimit, message, roomScopeKey(scope), options.now.getTime());
  const holdOf = (budget: PendingAppend['budget']): AppendHold => {
    let released = false;
    return {
      budget,
      async release() {
        if (released || !budget) return;
        released = true;
        await rateWindows.giveBack(budget.budget);
      },
    };
  };
  return {
    append: (scope, message, options) =>
      storeCall(async () => {
        const commit = startCommitSpan('append');
        const outcome = await traced(commit, batcher.submit({ step: 'append', scope, message, options, budget: budgetOf(scope, message, options), commit }));
        if (outcome.kind === 'held') throw new Error('the append statement answered an append as held');
        return outcome;
      }),
    hold: (scope, message, options) =>
      storeCall(async () => {
        const budget = budgetOf(scope, message, options);
        const commit = startCommitSpan('hold');
        const outcome = await traced(commit, batcher.submit({ step: 'hold', scope, message, options, budget, commit }));
        if (outcome.kind === 'created') throw new Error('the append statement stored a held append');
        return outcome.kind === 'held' ? { kind: 'held', hold: holdOf(budget) } : outcome;
      }),
    listAfter: (roomId, afterSeq, limit) =>
      storeCall(() =>
        db
          .select(messageColumns)
          .from(messages)
          .where(and(eq(messages.roomId, roomId), gt(messages.seq, afterSeq)))
          .orderBy(asc(messages.seq))
          .limit(limit),
      ),
    listBefore: (roomId, beforeSeq, limit) =>
      storeCall(async () => {
        const rows = await db
          .select(messageColumns)
          .from(messages)
          .where(and(eq(messages.roomId, roomId), lt(messages.seq, beforeSeq)))
          .orderBy(desc(messages.seq))
          .limit(limit);
        return rows.reverse();
      }),
    search: (query) => searchMessages(db, query),
  };
}

/** The step's outcome, told to its span (when tracing is on) with the room and seq of a created message. */
async function traced(commit: CommitSpan | undefined, outcome: Promise<StepOutcome>): Promise<StepOutcome> {
  if (commit === undefined) return outcome;
  try {
    const settled = await outcome;
    commit.end(settled.kind, settled.kind === 'created' ? { roomId: settled.message.roomId, seq: settled.message.seq } : undefined);
    return settled;
  } catch (err) {
    commit.fail(err);
    throw err;
  }
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
