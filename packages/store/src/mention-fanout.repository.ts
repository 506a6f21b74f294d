import { and, asc, desc, eq, inArray, lte, or, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { mentionFanout, type MentionFanoutRow } from './mention-fanout.schema.ts';
import type { MessageRow } from './schema.ts';
import { storeCall } from './store-errors.ts';

/** A claim is a lease: until it lapses nobody else takes the row, and a crashed worker's claim lapses. */
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
   * leased. Counts an attempt. Null when there is nothing to do (done, dead, or someone holds it).
   */
  claim(messageId: string, options: ClaimOptions): Promise<MentionFanoutRow | null>;
  /**
   * Claims due rows, oldest first: older than `graceMs`, not leased, not dead. Rows other workers
   * are claiming at this moment are skipped (`FOR UPDATE SKIP LOCKED`), so sweepers in several
   * processes never take the same row. Counts an attempt on each.
   */
  claimDue(options: ClaimDueOptions): Promise<MentionFanoutRow[]>;
  /** The fan-out is written: removes the row. Removing it twice is harmless. */
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
  /** Dead rows, most recent first. */
  listDead(limit: number): Promise<MentionFanoutRow[]>;
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

export function createMentionFanoutRepository(db: ChatDb): MentionFanoutRepository {
  const leaseUntil = (options: ClaimOptions) => new Date(options.now.getTime() + options.leaseMs);
  return {
    claim: (messageId, options) =>
      storeCall(async () => {
        const [row] = await db
          .update(mentionFanout)
          .set({ attempts: sql`${mentionFanout.attempts} + 1`, nextAttemptAt: leaseUntil(options) })
          .where(
            and(
              eq(mentionFanout.messageId, messageId),
              eq(mentionFanout.dead, false),
              // A row nobody has tried yet is free whatever the clocks of the writer and this worker say.
              or(eq(mentionFanout.attempts, 0), lte(mentionFanout.nextAttemptAt, options.now)),
            ),
          )
          .returning();
        return row ?? null;
      }),
    claimDue: (options) =>
      storeCall(async () => {
        const due = db
          .select({ messageId: mentionFanout.messageId })
          .from(mentionFanout)
          .where(
            and(
              eq(mentionFanout.dead, false),
              lte(mentionFanout.nextAttemptAt, options.now),
              lte(mentionFanout.createdAt, new Date(options.now.getTime() - options.graceMs)),
            ),
          )
          .orderBy(asc(mentionFanout.createdAt), asc(mentionFanout.messageId))
          .limit(options.limit)
          .for('update', { skipLocked: true });
        const rows = await db
          .update(mentionFanout)
          .set({ attempts: sql`${mentionFanout.attempts} + 1`, nextAttemptAt: leaseUntil(options) })
          .where(inArray(mentionFanout.messageId, due))
          .returning();
        return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.messageId < b.messageId ? -1 : 1));
      }),
    complete: (messageId) =>
      storeCall(async () => {
        await db.delete(mentionFanout).where(eq(mentionFanout.messageId, messageId));
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
    listDead: (limit) =>
      storeCall(() =>
        db.select().from(mentionFanout).where(eq(mentionFanout.dead, true)).orderBy(desc(mentionFanout.nextAttemptAt)).limit(limit),
      ),
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
