import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { inboxKey, type InboxOwner } from './inbox.repository.ts';
import { inboxes, notifications, type InboxRow, type NotificationRow, type StoredSpan } from './inbox.schema.ts';
import { mentionFanout } from './mention-fanout.schema.ts';
import { nextMessageId } from './monotonic-ulid.ts';
import { feedKey } from './principal-feed.repository.ts';
import { rowsOf } from './sql-script.ts';
import { storeCall } from './store-errors.ts';

/** What the notifier decides about a notification; its ID, time and seq are the store's. */
export interface NewNotification {
  messageId: string;
  roomId: string;
  branchId: string | null;
  senderKind: 'user' | 'bot';
  senderId: string;
  spans: StoredSpan[];
}

export interface NotificationAppendOptions {
  now: Date;
  /** The backbone payload of the new notification, stored in the outbox in the same transaction. */
  outboxPayload(row: NotificationRow): string;
  /**
   * Write only while the message's fan-out row is pending (present and not dead), holding it against
   * completion and dead-lettering until the notification commits. A worker whose claim lapsed and
   * whose row was settled by another worker then writes nothing, so no notification of a message
   * lands after the next message of its room was fanned out: the append throws `FanoutSettledError`.
   * @defaultValue false
   */
  whileFanoutPending?: boolean;
  /**
   * The notified message as its MessageResponse JSON: carried in the feed entry, so a feed stream
   * that hands each notification with its message reads no message for a live event.
   */
  feedMessage?: string;
}

/** The message's fan-out row is done or dead-lettered, so this worker's fan-out of it is void. */
export class FanoutSettledError extends Error {
  constructor(readonly messageId: string) {
    super(`the fan-out of message ${messageId} was settled by another worker`);
    this.name = 'FanoutSettledError';
  }
}

/** A created notification's entry in its principal's feed, and the outbox entry that carries it. */
export interface FeedPlacement {
  /** The feed's key: the entry's backbone scope key. */
  feedKey: string;
  feedSeq: number;
  outboxId: number;
  /** The entry's backbone data: `{"inboxSeq":<seq>,"notification":<the inbox entry's payload>[,"message":<feedMessage>]}`. */
  payload: string;
}

export type NotificationAppendOutcome =
  /** `notification.feedSeq` is `feed.feedSeq`; `outboxId` is the inbox entry's. */
  | { kind: 'created'; notification: NotificationRow; inbox: InboxRow; outboxId: number; feed: FeedPlacement }
  /** The message was already fanned out to this inbox: the one notification it made. */
  | { kind: 'existing'; notification: NotificationRow };

export interface NotificationRepository {
  /**
   * Appends one notification atomically: the inbox (created on first use), its counters, the
   * notification, its place in the principal's feed (created on first use) and the two outbox
   * entries, the inbox's and the feed's, commit together. Appends to an inbox are serialized on the
   * inbox row, which makes the per-inbox seq contiguous and (createdAt, notificationId) follow commit
   * order, however many notifier processes write; appends to a principal's feed are serialized on
   * the feed row, taken after the inbox row, which does the same for the feed seq across its
   * inboxes. At most one notification per (inbox, message); an `existing` outcome takes no feed seq.
   */
  append(owner: InboxOwner, input: NewNotification, options: NotificationAppendOptions): Promise<NotificationAppendOutcome>;
  /** Notifications of an inbox with seq greater than `afterSeq`, oldest first (list pages, stream replay). */
  listAfter(key: string, afterSeq: number, limit: number): Promise<NotificationRow[]>;
  findBySeq(key: string, seq: number): Promise<NotificationRow | null>;
}

export function createNotificationRepository(db: ChatDb): NotificationRepository {
  return {
    append: (owner, input, options) => storeCall(() => appendInTransaction(db, owner, input, options)),
    listAfter: (key, afterSeq, limit) =>
      storeCall(() =>
        db
          .select()
          .from(notifications)
          .where(and(eq(notifications.inboxKey, key), gt(notifications.seq, afterSeq)))
          .orderBy(asc(notifications.seq))
          .limit(limit),
      ),
    findBySeq: (key, seq) =>
      storeCall(async () => {
        const [row] = await db
          .select()
          .from(notifications)
          .where(and(eq(notifications.inboxKey, key), eq(notifications.seq, seq)))
          .limit(1);
        return row ?? null;
      }),
  };
}

async function appendInTransaction(
  db: ChatDb,
  owner: InboxOwner,
  input: NewNotification,
  options: NotificationAppendOptions,
): Promise<NotificationAppendOutcome> {
  return db.transaction(async (tx) => {
    if (options.whileFanoutPending) {
      // FOR SHARE: completing or dead-lettering the row waits for this transaction. Taken before the
      // inbox lock, as every writer here does, so the two locks never wait on each other in a cycle.
      const [pending] = await tx
        .select({ messageId: mentionFanout.messageId })
        .from(mentionFanout)
        .where(and(eq(mentionFanout.messageId, input.messageId), eq(mentionFanout.dead, false)))
        .for('share');
      if (!pending) throw new FanoutSettledError(input.messageId);
    }
    const key = inboxKey(owner);
    const lockInbox = async () => {
      const [row] = await tx.select().from(inboxes).where(eq(inboxes.inboxKey, key)).for('update');
      return row;
    };
    let inbox = await lockInbox();
    if (!inbox) {
      await tx
        .insert(inboxes)
        .values({ inboxKey: key, ...owner, createdAt: options.now })
        .onConflictDoNothing({ target: inboxes.inboxKey });
      inbox = await lockInbox();
      if (!inbox) throw new Error(`inbox ${key} vanished after insert`);
    }

    const previous =
      inbox.lastNotificationAt && inbox.lastNotificationId ? { timeMs: inbox.lastNotificationAt.getTime(), id: inbox.lastNotificationId } : null;
    const next = nextMessageId(options.now.getTime(), previous);
    const seq = inbox.lastSeq + 1;
    const createdAt = new Date(next.timeMs);
    // The one-per-(inbox, message) check is the insert itself: under the inbox lock no other append to
    // this inbox runs, and a conflict leaves nothing behind. Fewer round trips matter here: a room's
    // fan-outs are written one after another.
    const [notification] = await tx
      .insert(notifications)
      .values({
        ...input,
        inboxKey: key,
        seq,
        notificationId: next.id,
        targetKind: owner.principalKind,
        targetId: owner.principalId,
        repositoryId: owner.repositoryId,
        createdAt,
      })
      .onConflictDoNothing({ target: [notifications.inboxKey, notifications.messageId] })
      .returning();
    if (!notification) {
      const [existing] = await tx
        .select()
        .from(notifications)
        .where(and(eq(notifications.inboxKey, key), eq(notifications.messageId, input.messageId)))
        .limit(1);
      if (!existing) throw new Error(`notification of ${input.messageId} in ${key} neither inserted nor found`);
      return { kind: 'existing', notification: existing } as const;
    }
    // The inbox's counters, the feed's counter, the notification's feed seq and both outbox entries in
    // one statement. The feed row is locked here, after the inbox row, the order every writer keeps.
    const inboxPayload = options.outboxPayload(notification);
    const feed = feedKey(owner);
    const feedPayload = `{"inboxSeq":${seq},"notification":${inboxPayload}${options.feedMessage === undefined ? '' : `,"message":${options.feedMessage}`}}`;
    const placed = await tx.execute(sql`WITH moved AS (
        UPDATE inboxes SET last_seq = ${seq}, last_notification_at = ${createdAt.toISOString()}::timestamptz, last_notification_id = ${next.id}
        WHERE inbox_key = ${key} RETURNING inbox_key),
      fed AS (
        INSERT INTO principal_feeds (feed_key, principal_kind, principal_id, last_seq) VALUES (${feed}, ${owner.principalKind}, ${owner.principalId}, 1)
        ON CONFLICT (feed_key) DO UPDATE SET last_seq = principal_feeds.last_seq + 1
        RETURNING last_seq),
      numbered AS (
        UPDATE notifications SET feed_seq = fed.last_seq FROM fed
        WHERE notifications.inbox_key = ${key} AND notifications.seq = ${seq} RETURNING notifications.feed_seq),
      inbox_entry AS (
        INSERT INTO outbox (channel, scope_key, seq, payload)
        SELECT 'notifications', moved.inbox_key, ${seq}, ${inboxPayload} FROM moved
        RETURNING id),
      feed_entry AS (
        INSERT INTO outbox (channel, scope_key, seq, payload)
        SELECT 'notifications', ${feed}, fed.last_seq, ${feedPayload} FROM fed
        RETURNING id)
      SELECT inbox_entry.id AS outbox_id, numbered.feed_seq, feed_entry.id AS feed_outbox_id
      FROM inbox_entry, numbered, feed_entry`);
    const [entry] = rowsOf<{ outbox_id: number | string; feed_seq: number | string; feed_outbox_id: number | string }>(placed);
    if (!entry) throw new Error(`inbox ${key} vanished under its lock`);
    const feedSeq = Number(entry.feed_seq);
    const updatedInbox: InboxRow = { ...inbox, lastSeq: seq, lastNotificationAt: createdAt, lastNotificationId: next.id };
    return {
      kind: 'created',
      notification: { ...notification, feedSeq },
      inbox: updatedInbox,
      outboxId: Number(entry.outbox_id),
      feed: { feedKey: feed, feedSeq, outboxId: Number(entry.feed_outbox_id), payload: feedPayload },
    } as const;
  });
}
