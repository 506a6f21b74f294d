/**
 * drizzle definitions of the inbox tables; they mirror `../migrations/0002_inbox.sql` and
 * `0009_principal_feeds.sql` (`feed_seq`), the source of truth for their shape.
 */
import { bigint, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 6 });

export const inboxes = pgTable('inboxes', {
  inboxKey: text('inbox_key').primaryKey(),
  repositoryId: text('repository_id').notNull(),
  principalKind: text('principal_kind', { enum: ['human', 'bot'] }).notNull(),
  principalId: text('principal_id').notNull(),
  createdAt: timestamptz('created_at').notNull(),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(0),
  lastNotificationAt: timestamptz('last_notification_at'),
  lastNotificationId: text('last_notification_id'),
  ackSeq: bigint('ack_seq', { mode: 'number' }).notNull().default(0),
});

/** One span of a mention in the message body, in UTF-8 bytes. */
export interface StoredSpan {
  startByte: number;
  endByte: number;
}

export const notifications = pgTable(
  'notifications',
  {
    inboxKey: text('inbox_key').notNull().references(() => inboxes.inboxKey),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    notificationId: text('notification_id').notNull().unique(),
    targetKind: text('target_kind', { enum: ['human', 'bot'] }).notNull(),
    targetId: text('target_id').notNull(),
    messageId: text('message_id').notNull(),
    roomId: text('room_id').notNull(),
    repositoryId: text('repository_id').notNull(),
    branchId: text('branch_id'),
    senderKind: text('sender_kind', { enum: ['user', 'bot'] }).notNull(),
    senderId: text('sender_id').notNull(),
    spans: jsonb('spans').$type<StoredSpan[]>().notNull(),
    createdAt: timestamptz('created_at').notNull(),
    /** The notification's position in its principal's feed; null only on a row written without the feed. */
    feedSeq: bigint('feed_seq', { mode: 'number' }),
  },
  (t) => [
    primaryKey({ columns: [t.inboxKey, t.seq] }),
    uniqueIndex('notifications_message_idx').on(t.inboxKey, t.messageId),
    uniqueIndex('notifications_feed_idx').on(t.targetKind, t.targetId, t.feedSeq),
  ],
);

export type InboxRow = typeof inboxes.$inferSelect;
export type NotificationRow = typeof notifications.$inferSelect;
