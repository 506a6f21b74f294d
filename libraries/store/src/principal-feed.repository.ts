import { and, asc, eq, getTableColumns, gt, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { inboxes, notifications, type NotificationRow } from './inbox.schema.ts';
import { principalFeeds, type PrincipalFeedRow } from './principal-feed.schema.ts';
import { messages, type MessageRow } from './schema.ts';
import { storeCall } from './store-errors.ts';

/** Whose feed: a principal, as in inbox keys (a user token's principal is kind `human`). */
export interface FeedPrincipal {
  principalKind: 'human' | 'bot';
  principalId: string;
}

/**
 * The unique key of a principal's feed, also its backbone scope key: `feed:<principalKind>:<principalId>`,
 * the string the cursor codec binds feed cursors to.
 */
export function feedKey(principal: FeedPrincipal): string {
  return `feed:${principal.principalKind}:${principal.principalId}`;
}

/** A notification at its feed position, with its inbox's checkpoint (for `acknowledged`). */
export type FeedNotificationRow = NotificationRow & { feedSeq: number; inboxAckSeq: number };

/** A feed row with the message it notifies of (null only if the message is gone, which the store never does). */
export type FeedNotificationWithMessage = FeedNotificationRow & { message: MessageRow | null };

export interface FeedAcknowledgement {
  /** The feed position to acknowledge through. */
  throughSeq: number;
  /** When given, the checkpoint the caller believes current (0: none yet); else the move is stale. */
  expectedSeq?: number;
}

export interface FeedAcknowledgeOutcome {
  /** The checkpoint after the call. */
  ackSeq: number;
  /** True when `throughSeq` was already at or behind the checkpoint, so nothing moved. */
  replayed: boolean;
}

/** `expectedSeq` is not the feed's checkpoint. */
export class FeedCheckpointStaleError extends Error {
  constructor(readonly feedKey: string) {
    super(`the acknowledged checkpoint of ${feedKey} is not the expected one`);
    this.name = 'FeedCheckpointStaleError';
  }
}

/** No notification of the feed is at `throughSeq` (0, or beyond the feed's end). */
export class FeedPositionUnavailableError extends Error {
  constructor(
    readonly feedKey: string,
    readonly seq: number,
  ) {
    super(`${feedKey} has no notification at ${seq}`);
    this.name = 'FeedPositionUnavailableError';
  }
}

export interface PrincipalFeedRepository {
  /** The feed, or null when the principal was never notified. */
  find(principal: FeedPrincipal): Promise<PrincipalFeedRow | null>;
  /** The principal's notifications with feed seq greater than `afterSeq`, in feed order (pages, stream replay). */
  listAfter(principal: FeedPrincipal, afterSeq: number, limit: number): Promise<FeedNotificationRow[]>;
  /** `listAfter`, each row with its message: a feed stream that hands the message with its notification. */
  listAfterWithMessages(principal: FeedPrincipal, afterSeq: number, limit: number): Promise<FeedNotificationWithMessage[]>;
  /**
   * Moves the feed's checkpoint forward to `throughSeq` and, in the same transaction, each inbox's
   * checkpoint forward to its highest notification at or below that feed position, so per-repository
   * views agree. A compare-and-set on `expectedSeq`: of racing moves from one checkpoint exactly one
   * succeeds. A `throughSeq` at or behind the checkpoint is a replay that changes nothing.
   * @throws FeedPositionUnavailableError when no notification of the feed is at `throughSeq`.
   * @throws FeedCheckpointStaleError when `expectedSeq` is given and is not the checkpoint.
   */
  acknowledge(principal: FeedPrincipal, acknowledgement: FeedAcknowledgement): Promise<FeedAcknowledgeOutcome>;
}

export function createPrincipalFeedRepository(db: ChatDb): PrincipalFeedRepository {
  return {
    find: (principal) =>
      storeCall(async () => {
        const [row] = await db.select().from(principalFeeds).where(eq(principalFeeds.feedKey, feedKey(principal))).limit(1);
        return row ?? null;
      }),
    listAfter: (principal, afterSeq, limit) =>
      storeCall(async () => {
        const rows = await db
          .select({ ...getTableColumns(notifications), inboxAckSeq: inboxes.ackSeq })
          .from(notifications)
          .innerJoin(inboxes, eq(inboxes.inboxKey, notifications.inboxKey))
          .where(
            and(
              eq(notifications.targetKind, principal.principalKind),
              eq(notifications.targetId, principal.principalId),
              gt(notifications.feedSeq, afterSeq),
            ),
          )
          .orderBy(asc(notifications.feedSeq))
          .limit(limit);
        // `feed_seq > afterSeq` holds no NULL.
        return rows as FeedNotificationRow[];
      }),
    listAfterWithMessages: (principal, afterSeq, limit) =>
      storeCall(async () => {
        const rows = await db
          .select({ ...getTableColumns(notifications), inboxAckSeq: inboxes.ackSeq, message: messages })
          .from(notifications)
          .innerJoin(inboxes, eq(inboxes.inboxKey, notifications.inboxKey))
          .leftJoin(messages, eq(messages.messageId, notifications.messageId))
          .where(
            and(
              eq(notifications.targetKind, principal.principalKind),
              eq(notifications.targetId, principal.principalId),
              gt(notifications.feedSeq, afterSeq),
            ),
          )
          .orderBy(asc(notifications.feedSeq))
          .limit(limit);
        return rows as FeedNotificationWithMessage[];
      }),
    acknowledge: (principal, acknowledgement) => storeCall(() => acknowledgeInTransaction(db, principal, acknowledgement)),
  };
}

/** The outcome decided by the checkpoint alone, or undefined when the checkpoint is to move. */
function judge(key: string, { throughSeq, expectedSeq }: FeedAcknowledgement, ackSeq: number): FeedAcknowledgeOutcome | undefined {
  if (expectedSeq !== undefined && expectedSeq !== ackSeq) throw new FeedCheckpointStaleError(key);
  return throughSeq <= ackSeq ? { ackSeq, replayed: true } : undefined;
}

async function acknowledgeInTransaction(db: ChatDb, principal: FeedPrincipal, acknowledgement: FeedAcknowledgement): Promise<FeedAcknowledgeOutcome> {
  const key = feedKey(principal);
  const { throughSeq } = acknowledgement;
  const ofPrincipal = sql`target_kind = ${principal.principalKind} AND target_id = ${principal.principalId}`;
  return db.transaction(async (tx) => {
    const feedRow = () => tx.select({ lastSeq: principalFeeds.lastSeq, ackSeq: principalFeeds.ackSeq }).from(principalFeeds).where(eq(principalFeeds.feedKey, key));
    const [seen] = await feedRow();
    // last_seq only grows, and every position at or below a committed last_seq is committed.
    if (!seen || throughSeq < 1 || throughSeq > seen.lastSeq) throw new FeedPositionUnavailableError(key, throughSeq);
    const early = judge(key, acknowledgement, seen.ackSeq);
    if (early) return early;
    // The inbox rows first, in key order, then the feed row: appends take an inbox row before the feed
    // row, so neither they nor other acknowledgements wait on this one in a cycle.
    await tx.execute(sql`SELECT inbox_key FROM inboxes WHERE inbox_key IN (
        SELECT inbox_key FROM notifications WHERE ${ofPrincipal} AND feed_seq > ${seen.ackSeq} AND feed_seq <= ${throughSeq})
      ORDER BY inbox_key FOR UPDATE`);
    const [locked] = await feedRow().for('update');
    if (!locked) throw new Error(`feed ${key} vanished`);
    // The checkpoint only moves forward, so the inboxes locked above cover what is left to move.
    const settled = judge(key, acknowledgement, locked.ackSeq);
    if (settled) return settled;
    await tx.execute(sql`WITH reached AS (
        SELECT inbox_key, max(seq) AS seq FROM notifications
        WHERE ${ofPrincipal} AND feed_seq > ${locked.ackSeq} AND feed_seq <= ${throughSeq}
        GROUP BY inbox_key),
      moved_inboxes AS (
        UPDATE inboxes SET ack_seq = reached.seq FROM reached
        WHERE inboxes.inbox_key = reached.inbox_key AND inboxes.ack_seq < reached.seq)
      UPDATE principal_feeds SET ack_seq = ${throughSeq} WHERE feed_key = ${key}`);
    return { ackSeq: throughSeq, replayed: false };
  });
}
