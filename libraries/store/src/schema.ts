/**
 * drizzle table definitions. They mirror the SQL migrations in `../migrations`, which are the
 * source of truth for the database shape (a test checks the two agree).
 */
import { getTableColumns } from 'drizzle-orm';
import { bigint, bigserial, customType, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/** UTF-8 text kept as bytes, so any string (NUL included) round-trips exactly. */
const utf8Bytes = customType<{ data: string; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (value) => Buffer.from(value, 'utf8'),
  fromDriver: (value) => Buffer.from(value).toString('utf8'),
});

const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 6 });

export const serviceKeys = pgTable('service_keys', {
  name: text('name').primaryKey(),
  secret: text('secret').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export const rooms = pgTable('rooms', {
  roomId: text('room_id').primaryKey(),
  scopeKey: text('scope_key').notNull().unique(),
  repositoryId: text('repository_id').notNull(),
  branchId: text('branch_id'),
  kind: text('kind', { enum: ['repository', 'branch'] }).notNull(),
  state: text('state', { enum: ['active', 'sealed'] }).notNull().default('active'),
  createdAt: timestamptz('created_at').notNull(),
  sealedAt: timestamptz('sealed_at'),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(0),
  lastMessageAt: timestamptz('last_message_at'),
  lastMessageId: text('last_message_id'),
});

export interface StoredMention {
  principalKind: 'human' | 'bot';
  principalId: string;
  startByte: number;
  endByte: number;
}

export const messages = pgTable(
  'messages',
  {
    roomId: text('room_id').notNull().references(() => rooms.roomId),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    messageId: text('message_id').notNull().unique(),
    repositoryId: text('repository_id').notNull(),
    branchId: text('branch_id'),
    senderKind: text('sender_kind', { enum: ['user', 'bot'] }).notNull(),
    senderId: text('sender_id').notNull(),
    requestId: text('request_id').notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    bodyMarkdown: utf8Bytes('body_markdown').notNull(),
    bodyBytes: integer('body_bytes').notNull(),
    renderedHtml: text('rendered_html').notNull(),
    mentions: jsonb('mentions').$type<StoredMention[]>(),
    createdAt: timestamptz('created_at').notNull(),
    authorizationDecisionId: text('authorization_decision_id'),
    authorizingSubjectId: text('authorizing_subject_id'),
    authorizingSubjectKind: text('authorizing_subject_kind', { enum: ['user', 'organization'] }),
    botCredentialId: text('bot_credential_id'),
    botGrantId: text('bot_grant_id'),
    /** What search matches (sql/functions/chat_message_search_text.sql); never read back. */
    searchText: text('search_text'),
  },
  (t) => [
    primaryKey({ columns: [t.roomId, t.seq] }),
    uniqueIndex('messages_idempotency_idx').on(t.roomId, t.senderKind, t.senderId, t.idempotencyKey),
  ],
);

export const outbox = pgTable('outbox', {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    channel: text('channel', { enum: ['messages', 'notifications'] }).notNull(),
    scopeKey: text('scope_key').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** The event's data; NULL for `messages` entries, whose data is the message (see OutboxRepository). */
    payload: text('payload'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
);

export const schema = { serviceKeys, rooms, messages, outbox };
export type RoomRow = typeof rooms.$inferSelect;
export type MessageRow = Omit<typeof messages.$inferSelect, 'searchText'>;

/** The columns of a message that reads return: all but `search_text`, which only search reads. */
export const messageColumns = (({ searchText: _searchText, ...columns }) => columns)(getTableColumns(messages));
export type OutboxRow = typeof outbox.$inferSelect;
