import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
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

/** A notification this append made: `notification.feedSeq` is `feed.feedSeq`; `outboxId` is the inbox entry's. */
export interface CreatedNotification {
  kind: 'created';
  notification: NotificationRow;
  inbox: InboxRow;
  outboxId: number;
  feed: FeedPlacement;
}

export type NotificationAppendOutcome =
  | CreatedNotification
  /** The message was already fanned out to this inbox: the one notification it made. */
  | { kind: 'existing'; notification: NotificationRow };

/** One message of a room's run of fan-outs: a notification for each target that may read it. */
export interface FanoutRunMessage {
  messageId: string;
  notifications: Array<{ owner: InboxOwner; input: NewNotification }>;
  /** The message as its MessageResponse JSON, carried in its feed entries (see `NotificationAppendOptions.feedMessage`). */
  feedMessage?: string;
}

export interface FanoutRunOutcome {
  /** The run's messages, in run order, whose fan-out rows this call removed: all of them. */
  settled: string[];
  /** The notifications made, in the order written. */
  created: CreatedNotification[];
}

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
  /**
   * Writes the fan-outs of consecutive messages of one room (a run, in seq order, starting with the
   * room's head) in one transaction that also removes their fan-out rows, so a message's
   * notifications and the end of its fan-out commit together, and a busy room's messages cost one
   * commit for several. The inboxes, then the principals' feeds, are locked in key order before
   * anything is written, so runs of different rooms never wait on each other in a cycle; within the
   * run, notifications are written in message order, so every inbox and feed follows the room's
   * order. Throws `FanoutSettledError` and writes nothing when any message of the run is no longer
   * pending (another worker settled it after this one's claim lapsed).
   */
  appendFanoutRun(run: FanoutRunMessage[], options: Pick<NotificationAppendOptions, 'now' | 'outboxPayload'>): Promise<FanoutRunOutcome>;
  /** Notifications of an inbox with seq greater than `afterSeq`, oldest first (list pages, stream replay). */
  listAfter(key: string, afterSeq: number, limit: number): Promise<NotificationRow[]>;
  findBySeq(key: string, seq: number): Promise<NotificationRow | null>;
}

export function createNotificationRepository(db: ChatDb): NotificationRepository {
  return {
    append: (owner, input, options) => storeCall(() => appendInTransaction(db, owner, input, options)),
    appendFanoutRun: (run, options) => storeCall(() => appendRunInTransaction(db, run, options)),
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
    const inbox = await lockInbox(tx, owner, options.now);
    return (await writeUnderLocks(tx, inbox, owner, input, options)).outcome;
  });
}

async function appendRunInTransaction(
  db: ChatDb,
  run: FanoutRunMessage[],
  options: Pick<NotificationAppendOptions, 'now' | 'outboxPayload'>,
): Promise<FanoutRunOutcome> {
  if (run.length === 0) return { settled: [], created: [] };
  return db.transaction(async (tx) => {
    // Removing the rows first takes their locks: a worker completing or dead-lettering one of them
    // waits for this transaction, and one that already did leaves it out here.
    const removed = await tx
      .delete(mentionFanout)
      .where(and(inArray(mentionFanout.messageId, run.map((m) => m.messageId)), eq(mentionFanout.dead, false)))
      .returning({ messageId: mentionFanout.messageId });
    const pending = new Set(removed.map((r) => r.messageId));
    const gone = run.find((m) => !pending.has(m.messageId));
    if (gone) throw new FanoutSettledError(gone.messageId);

    const owners = new Map(run.flatMap((m) => m.notifications.map((n) => [inboxKey(n.owner), n.owner] as const)));
    const held = new Map<string, InboxRow>();
    for (const key of [...owners.keys()].sort()) held.set(key, await lockInbox(tx, owners.get(key)!, options.now));
    const feeds = new Map([...owners.values()].map((o) => [feedKey(o), o] as const));
    const feedKeys = [...feeds.keys()].sort();
    // A run with one principal's feed takes its lock with its first write, after every inbox lock;
    // with several, they are taken here, in key order, before any write takes one out of order.
    if (feedKeys.length > 1) {
      await tx.execute(sql`INSERT INTO principal_feeds (feed_key, principal_kind, principal_id, last_seq)
        VALUES ${sql.join(feedKeys.map((key) => sql`(${key}, ${feeds.get(key)!.principalKind}, ${feeds.get(key)!.principalId}, 0)`), sql`, `)}
        ON CONFLICT (feed_key) DO NOTHING`);
      await tx.execute(sql`SELECT feed_key FROM principal_feeds WHERE feed_key IN (${sql.join(feedKeys.map((key) => sql`${key}`), sql`, `)})
        ORDER BY feed_key FOR UPDATE`);
    }

    const created: CreatedNotification[] = [];
    for (const message of run) {
      for (const { owner, input } of message.notifications) {
        const key = inboxKey(owner);
        const written = await writeUnderLocks(tx, held.get(key)!, owner, input, {
          ...options,
          ...(message.feedMessage === undefined ? {} : { feedMessage: message.feedMessage }),
        });
        held.set(key, written.inbox);
        if (written.outcome.kind === 'created') created.push(written.outcome);
      }
    }
    return { settled: run.map((m) => m.messageId), created };
  });
}

type Tx = Parameters<Parameters<ChatDb['transaction']>[0]>[0];

/** Locks the owner's inbox row until commit, creating the inbox on first use. */
async function lockInbox(tx: Tx, owner: InboxOwner, now: Date): Promise<InboxRow> {
  const key = inboxKey(owner);
  const lock = async () => {
    const [row] = await tx.select().from(inboxes).where(eq(inboxes.inboxKey, key)).for('update');
    return row;
  };
  const found = await lock();
  if (found) return found;
  await tx
    .insert(inboxes)
    .values({ inboxKey: key, ...owner, createdAt: now })
    .onConflictDoNothing({ target: inboxes.inboxKey });
  const created = await lock();
  if (!created) throw new Error(`inbox ${key} vanished after insert`);
  return created;
}

/**
 * Writes one notification into an inbox whose row this transaction holds (`inbox`, as it stands
 * now), and takes its place in the principal's feed. Returns the outcome and the inbox as it stands
 * after, for the next write into it in the same transaction.
 */
async function writeUnderLocks(
  tx: Tx,
  inbox: InboxRow,
  owner: InboxOwner,
  input: NewNotification,
  options: Pick<NotificationAppendOptions, 'now' | 'outboxPayload' | 'feedMessage'>,
): Promise<{ outcome: NotificationAppendOutcome; inbox: InboxRow }> {
  const key = inbox.inboxKey;
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
    return { outcome: { kind: 'existing', notification: existing }, inbox };
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
    outcome: {
      kind: 'created',
      notification: { ...notification, feedSeq },
      inbox: updatedInbox,
      outboxId: Number(entry.outbox_id),
      feed: { feedKey: feed, feedSeq, outboxId: Number(entry.feed_outbox_id), payload: feedPayload },
    },
    inbox: updatedInbox,
  };
}
