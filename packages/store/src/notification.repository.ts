import { and, asc, eq, gt } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { inboxKey, type InboxOwner } from './inbox.repository.ts';
import { inboxes, notifications, type InboxRow, type NotificationRow, type StoredSpan } from './inbox.schema.ts';
import { mentionFanout } from './mention-fanout.schema.ts';
import { nextMessageId } from './monotonic-ulid.ts';
import { outbox } from './schema.ts';
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

    // Under the inbox lock no other append to this inbox runs, so this check cannot race.
    const [existing] = await tx
      .select()
      .from(notifications)
      .where(and(eq(notifications.inboxKey, key), eq(notifications.messageId, input.messageId)))
      .limit(1);
    if (existing) return { kind: 'existing', notification: existing } as const;

    const previous =
      inbox.lastNotificationAt && inbox.lastNotificationId ? { timeMs: inbox.lastNotificationAt.getTime(), id: inbox.lastNotificationId } : null;
    const next = nextMessageId(options.now.getTime(), previous);
    const seq = inbox.lastSeq + 1;
    const createdAt = new Date(next.timeMs);
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
      .returning();
    if (!notification) throw new Error('notification insert returned no row');
    const [updatedInbox] = await tx
      .update(inboxes)
      .set({ lastSeq: seq, lastNotificationAt: createdAt, lastNotificationId: next.id })
      .where(eq(inboxes.inboxKey, key))
      .returning();
    const [entry] = await tx
      .insert(outbox)
      .values({ channel: 'notifications', scopeKey: key, seq, payload: options.outboxPayload(notification) })
      .returning({ id: outbox.id });
    return { kind: 'created', notification, inbox: updatedInbox!, outboxId: entry!.id } as const;
  });
}
