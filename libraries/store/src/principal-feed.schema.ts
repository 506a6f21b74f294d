/**
 * drizzle definition of the principal feeds; it mirrors `../migrations/0009_principal_feeds.sql`, the
 * source of truth for its shape.
 */
import { bigint, pgTable, text } from 'drizzle-orm/pg-core';

export const principalFeeds = pgTable('principal_feeds', {
  feedKey: text('feed_key').primaryKey(),
  principalKind: text('principal_kind', { enum: ['human', 'bot'] }).notNull(),
  principalId: text('principal_id').notNull(),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(0),
  ackSeq: bigint('ack_seq', { mode: 'number' }).notNull().default(0),
});

export type PrincipalFeedRow = typeof principalFeeds.$inferSelect;
