import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { inboxKey, type InboxOwner } from './inbox.repository.ts';
import { inboxes, notifications, type InboxRow, type NotificationRow, type StoredSpan } from './inbox.schema.ts';
import { mentionFanout } from './mention-fanout.schema.ts';
import { nextMessageId } from './monotonic-ulid.ts';
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
}

/** The message's fan-out row is done or dead-lettered, so this worker's fan-out of it is void. */
export class FanoutSettledError extends Error {
  constructor(readonly messageId: string) {
    super(`the fan-out of message ${messageId} was settled by another worker`);
    this.name = 'FanoutSettledError';
  }
}

export type NotificationAppendOutcome =
  | { kind: 'created'; notification: NotificationRow; inbox: InboxRow; outboxId: number }
  /** The message was already fanned out to this inbox: the one notification it made. */
  | { kind: 'existing'; notification: NotificationRow };

export interface NotificationRepository {
  /**
   * Appends one notification atomically: the inbox (created on first use), its counters, the
   * notification and its outbox entry commit together. Appends to an inbox are serialized on the
   * inbox row, which makes the per-inbox seq contiguous and (createdAt, notificationId) follow commit
   * order, however many notifier processes write. At most one notification per (inbox, message).
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
    // The inbox's counters and the outbox entry in one statement.
    const moved = await tx.execute(sql`WITH moved AS (
        UPDATE inboxes SET last_seq = ${seq}, last_notification_at = ${createdAt.toISOString()}::timestamptz, last_notification_id = ${next.id}
        WHERE inbox_key = ${key} RETURNING inbox_key)
      INSERT INTO outbox (channel, scope_key, seq, payload)
      SELECT 'notifications', moved.inbox_key, ${seq}, ${options.outboxPayload(notification)} FROM moved
      RETURNING id`);
    const [entry] = rowsOf<{ id: number | string }>(moved);
    if (!entry) throw new Error(`inbox ${key} vanished under its lock`);
    const updatedInbox: InboxRow = { ...inbox, lastSeq: seq, lastNotificationAt: createdAt, lastNotificationId: next.id };
    return { kind: 'created', notification, inbox: updatedInbox, outboxId: Number(entry.id) } as const;
  });
}
