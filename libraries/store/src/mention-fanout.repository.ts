import { and, asc, desc, eq, gt, inArray, lte, or, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { mentionFanout, type MentionFanoutRow } from './mention-fanout.schema.ts';
import type { MessageRow } from './schema.ts';
import { storeCall } from './store-errors.ts';

/**
 * A claim is a lease: until it lapses nobody else takes the row, and a crashed worker's claim lapses.
 *
 * Rows of one room are run in seq order: only a room's head (its earliest row that is not dead) can
 * be claimed, and the row after it only once the head is completed or dead-lettered. A row's
 * notifications are written only while the row is pending (`NotificationAppendOptions.whileFanoutPending`),
 * so every notification of message n of a room commits before any of message n + 1, and each target's
 * inbox follows message order within the room however many workers run. A head waiting for its
 * retry holds its room back until it succeeds or is dead-lettered (`maxAttempts`, with backoff);
 * dead rows hold nothing back.
 */
export interface ClaimOptions {
  now: Date;
  /** How long the claimer may work on the row before another worker may take it. */
  leaseMs: number;
}

export interface ClaimDueOptions extends ClaimOptions {
  /** Rows younger than this are left to the low-latency path (the backbone consumer). */
  graceMs: number;
  limit: number;
}

export interface MentionFanoutRepository {
  /**
   * Claims one row for processing now (the backbone path): only a row that is neither dead nor
   * leased, and that is its room's head (no earlier row of its room is pending). Counts an attempt.
   * Null when there is nothing to do (done, dead, someone holds it, or an earlier row of the room is
   * still to be run: whoever runs that one goes on to this one with `claimNext`).
   */
  claim(messageId: string, options: ClaimOptions): Promise<MentionFanoutRow | null>;
  /**
   * Claims the head of a room (its earliest pending row) if nobody holds it and its retry is due:
   * what a worker calls after settling a row, so a room's rows run one after another in seq order.
   * Null when the room has no pending row, or its head is held or waiting for a retry.
   */
  claimNext(roomId: string, options: ClaimOptions): Promise<MentionFanoutRow | null>;
  /**
   * Claims due room heads, oldest first: each the earliest pending row of its room, older than
   * `graceMs`, not leased, not dead; at most one row per room. A row another worker claims at the
   * same moment goes to one of them only. Counts an attempt on each.
   */
  claimDue(options: ClaimDueOptions): Promise<MentionFanoutRow[]>;
  /**
   * The fan-out is written: removes the row, which lets the next row of its room run. Removing it
   * twice is harmless; a dead row is kept (a worker whose lease lapsed cannot erase a dead letter).
   */
  complete(messageId: string): Promise<void>;
  /**
   * Gives a claimed row back after a failure that is not the row's fault (core or the store was
   * unavailable): retried at `retryAt`, and the attempt does not count toward dead-lettering.
   */
  release(messageId: string, options: { retryAt: Date; error: string }): Promise<void>;
  /**
   * Records a failed attempt. A row that has used `maxAttempts` attempts becomes dead (kept for
   * operators, never claimed again). Returns whether it is dead now.
   */
  fail(messageId: string, options: { retryAt: Date; error: string; maxAttempts: number }): Promise<{ dead: boolean }>;
  find(messageId: string): Promise<MentionFanoutRow | null>;
  /** A room's pending (not dead) rows with seq greater than `afterSeq`, in seq order; claims nothing. */
  listPending(roomId: string, afterSeq: number, limit: number): Promise<MentionFanoutRow[]>;
  /** Dead rows, most recent first. */
  listDead(limit: number): Promise<MentionFanoutRow[]>;
  /**
   * Gives dead rows back to the workers, as rows nobody has tried (attempts 0, due now): those of
   * `messageIds`, or of `roomId`, or every one (`all`). Their last error stays until the next
   * attempt. Returns the message IDs requeued. A requeued row's notifications land at the end of
   * their targets' inboxes, after the messages fanned out meanwhile.
   */
  requeueDead(which: { messageIds: string[] } | { roomId: string } | { all: true }): Promise<string[]>;
  /** Rows waiting (not dead) and dead rows, for metrics. */
  counts(): Promise<{ pending: number; dead: number }>;
}

/** Longest error text kept on a row. */
const MAX_ERROR_LENGTH = 2000;

/**
 * Records that these messages have mentions to fan out, in one statement. Called inside the message
 * append transaction so the records commit with the messages or not at all.
 */
export async function recordMentionFanouts(tx: Pick<ChatDb, 'insert'>, messages: MessageRow[]): Promise<void> {
  if (messages.length === 0) return;
  await tx
    .insert(mentionFanout)
    .values(messages.map((m) => ({ messageId: m.messageId, roomId: m.roomId, seq: m.seq, createdAt: m.createdAt, nextAttemptAt: m.createdAt })))
    .onConflictDoNothing({ target: mentionFanout.messageId });
}

/** Neither dead nor leased. A row nobody has tried yet is free whatever the clocks of the writer and the worker say. */
const isFree = (now: Date) => and(eq(mentionFanout.dead, false), or(eq(mentionFanout.attempts, 0), lte(mentionFanout.nextAttemptAt, now)));

/**
 * No earlier row of the same room is pending. Rows of a room are inserted under its room lock in seq
 * order, so a row that is the head stays the head until it is completed or dead.
 */
const isRoomHead = sql`NOT EXISTS (SELECT 1 FROM mention_fanout earlier
  WHERE earlier.room_id = mention_fanout.room_id AND earlier.seq < mention_fanout.seq AND NOT earlier.dead)`;

export function createMentionFanoutRepository(db: ChatDb): MentionFanoutRepository {
  const leaseUntil = (options: ClaimOptions) => new Date(options.now.getTime() + options.leaseMs);
  return {
    claim: (messageId, options) =>
      storeCall(async () => {
        const [row] = await db
          .update(mentionFanout)
          .set({ attempts: sql`${mentionFanout.attempts} + 1`, nextAttemptAt: leaseUntil(options) })
          .where(and(eq(mentionFanout.messageId, messageId), isFree(options.now), isRoomHead))
          .returning();
        return row ?? null;
      }),
    claimNext: (roomId, options) =>
      storeCall(async () => {
        // The scalar subquery is evaluated once; a worker racing for the same head finds it leased
        // when the row lock lets it recheck the row, and gets nothing.
        const [row] = await db
          .update(mentionFanout)
          .set({ attempts: sql`${mentionFanout.attempts} + 1`, nextAttemptAt: leaseUntil(options) })
          .where(
            and(
              sql`${mentionFanout.messageId} = (SELECT head.message_id FROM mention_fanout head
                WHERE head.room_id = ${roomId} AND NOT head.dead ORDER BY head.seq LIMIT 1)`,
              isFree(options.now),
            ),
          )
          .returning();
        return row ?? null;
      }),
    claimDue: (options) =>
      storeCall(async () => {
        const now = options.now.toISOString();
        const graceCut = new Date(options.now.getTime() - options.graceMs).toISOString();
        // A room's head is its earliest pending row; the rows behind it are reached by claimNext.
        const heads = sql`SELECT head.message_id FROM (
            SELECT DISTINCT ON (room_id) message_id, created_at, next_attempt_at
            FROM mention_fanout WHERE NOT dead ORDER BY room_id, seq
          ) head
          WHERE head.next_attempt_at <= ${now}::timestamptz AND head.created_at <= ${graceCut}::timestamptz
          ORDER BY head.created_at, head.message_id
          LIMIT ${options.limit}`;
        // The outer conditions are rechecked under each row's lock: of two sweepers claiming the same
        // head, the second finds it leased and skips it.
        const rows = await db
          .update(mentionFanout)
          .set({ attempts: sql`${mentionFanout.attempts} + 1`, nextAttemptAt: leaseUntil(options) })
          .where(and(sql`${mentionFanout.messageId} IN (${heads})`, eq(mentionFanout.dead, false), lte(mentionFanout.nextAttemptAt, options.now)))
          .returning();
        return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.messageId < b.messageId ? -1 : 1));
      }),
    complete: (messageId) =>
      storeCall(async () => {
        await db.delete(mentionFanout).where(and(eq(mentionFanout.messageId, messageId), eq(mentionFanout.dead, false)));
      }),
    release: (messageId, options) =>
      storeCall(async () => {
        await db
          .update(mentionFanout)
          .set({
            attempts: sql`greatest(${mentionFanout.attempts} - 1, 0)`,
            nextAttemptAt: options.retryAt,
            lastError: options.error.slice(0, MAX_ERROR_LENGTH),
          })
          .where(eq(mentionFanout.messageId, messageId));
      }),
    fail: (messageId, options) =>
      storeCall(async () => {
        const [row] = await db
          .update(mentionFanout)
          .set({
            dead: sql`${mentionFanout.attempts} >= ${options.maxAttempts}`,
            nextAttemptAt: options.retryAt,
            lastError: options.error.slice(0, MAX_ERROR_LENGTH),
          })
          .where(eq(mentionFanout.messageId, messageId))
          .returning({ dead: mentionFanout.dead });
        return { dead: row?.dead ?? false };
      }),
    find: (messageId) =>
      storeCall(async () => {
        const [row] = await db.select().from(mentionFanout).where(eq(mentionFanout.messageId, messageId)).limit(1);
        return row ?? null;
      }),
    listPending: (roomId, afterSeq, limit) =>
      storeCall(() =>
        db
          .select()
          .from(mentionFanout)
          .where(and(eq(mentionFanout.roomId, roomId), gt(mentionFanout.seq, afterSeq), eq(mentionFanout.dead, false)))
          .orderBy(asc(mentionFanout.seq))
          .limit(limit),
      ),
    listDead: (limit) =>
      storeCall(() =>
        db.select().from(mentionFanout).where(eq(mentionFanout.dead, true)).orderBy(desc(mentionFanout.nextAttemptAt)).limit(limit),
      ),
    requeueDead: (which) =>
      storeCall(async () => {
        const scope =
          'messageIds' in which
            ? inArray(mentionFanout.messageId, which.messageIds.length > 0 ? which.messageIds : [''])
            : 'roomId' in which
              ? eq(mentionFanout.roomId, which.roomId)
              : sql`true`;
        const rows = await db
          .update(mentionFanout)
          .set({ dead: false, attempts: 0, nextAttemptAt: sql`now()` })
          .where(and(eq(mentionFanout.dead, true), scope))
          .returning({ messageId: mentionFanout.messageId });
        return rows.map((r) => r.messageId).sort();
      }),
    counts: () =>
      storeCall(async () => {
        const [row] = await db
          .select({
            pending: sql<number>`count(*) filter (where not ${mentionFanout.dead})::int`,
            dead: sql<number>`count(*) filter (where ${mentionFanout.dead})::int`,
          })
          .from(mentionFanout);
        return { pending: row?.pending ?? 0, dead: row?.dead ?? 0 };
      }),
  };
}
