/** drizzle definition of `mention_fanout`; mirrors `../migrations/0002_inbox.sql`. */
import { bigint, boolean, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 6 });

export const mentionFanout = pgTable('mention_fanout', {
  messageId: text('message_id').primaryKey(),
  roomId: text('room_id').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  createdAt: timestamptz('created_at').notNull(),
  nextAttemptAt: timestamptz('next_attempt_at').notNull(),
  attempts: integer('attempts').notNull().default(0),
  lastError: text('last_error'),
  dead: boolean('dead').notNull().default(false),
});

export type MentionFanoutRow = typeof mentionFanout.$inferSelect;
