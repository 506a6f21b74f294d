/**
 * drizzle definitions of the webhook tables; they mirror `../migrations/0011_webhooks.sql`, the
 * source of truth for their shape.
 */
import { bigint, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 6 });

export const webhooks = pgTable('webhooks', {
  webhookId: text('webhook_id').primaryKey(),
  principalKind: text('principal_kind', { enum: ['human', 'bot'] }).notNull(),
  principalId: text('principal_id').notNull(),
  url: text('url').notNull(),
  secret: text('secret').notNull(),
  createdAt: timestamptz('created_at').notNull(),
  dispatchedFeedSeq: bigint('dispatched_feed_seq', { mode: 'number' }).notNull().default(0),
});

export const webhookLanes = pgTable(
  'webhook_lanes',
  {
    webhookId: text('webhook_id').notNull(),
    inboxKey: text('inbox_key').notNull(),
    repositoryId: text('repository_id').notNull(),
    deliveredSeq: bigint('delivered_seq', { mode: 'number' }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamptz('next_attempt_at').notNull(),
    lastError: text('last_error'),
  },
  (t) => [primaryKey({ columns: [t.webhookId, t.inboxKey] })],
);

export const webhookDeadLetters = pgTable('webhook_dead_letters', {
  deliveryId: text('delivery_id').primaryKey(),
  webhookId: text('webhook_id').notNull(),
  notificationId: text('notification_id').notNull(),
  repositoryId: text('repository_id').notNull(),
  attempts: integer('attempts').notNull(),
  lastError: text('last_error').notNull(),
  deadAt: timestamptz('dead_at').notNull(),
  state: text('state', { enum: ['dead', 'redelivering'] }).notNull().default('dead'),
  redeliveryAttempts: integer('redelivery_attempts').notNull().default(0),
  nextAttemptAt: timestamptz('next_attempt_at'),
});

export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookLaneRow = typeof webhookLanes.$inferSelect;
export type WebhookDeadLetterRow = typeof webhookDeadLetters.$inferSelect;
