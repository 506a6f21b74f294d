import type { SqlStatement } from './sql-client.ts';
import type { MessageRow, RoomRow } from './schema.ts';

/**
 * The append path's statements, by hand. Each has fixed text whatever the batch size: rows travel
 * as one JSON parameter read with `json_to_recordset`, so PostgreSQL keeps every statement prepared
 * per connection and the same text runs on PGlite. Bodies travel base64-encoded because they may
 * hold NUL, which JSON-to-text conversion refuses.
 *
 * A prepared statement keeps the generic plan it got when first used, which on a new database is a
 * plan for empty tables. So every lookup is written to be an index probe whatever the statistics
 * say: equality on every column of a unique index, and per-row probes forced with LATERAL (a
 * subquery with OFFSET 0 or FOR UPDATE is never flattened into a join the planner could turn into
 * a sequential scan).
 */

const MESSAGE_COLUMNS = `room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id, request_id, idempotency_key,
  body_markdown, body_bytes, rendered_html, mentions, created_at, authorization_decision_id, authorizing_subject_id,
  authorizing_subject_kind, bot_credential_id, bot_grant_id`;

const ROOM_COLUMNS = 'room_id, scope_key, repository_id, branch_id, kind, state, created_at, sealed_at, last_seq, last_message_at, last_message_id';

/** Creates rooms that do not exist yet ($1: [{room_id, scope_key, repository_id, branch_id, kind, created_at}]). */
export const CREATE_ROOMS: SqlStatement = {
  name: 'chat_create_rooms_v1',
  text: `INSERT INTO rooms (room_id, scope_key, repository_id, branch_id, kind, state, created_at)
    SELECT r.room_id, r.scope_key, r.repository_id, r.branch_id, r.kind, 'active', r.created_at
    FROM json_to_recordset($1::json) AS r(room_id text, scope_key text, repository_id text, branch_id text, kind text, created_at timestamptz)
    ORDER BY r.scope_key
    ON CONFLICT (scope_key) DO NOTHING`,
};

/**
 * Locks rooms by scope key ($1: JSON array of keys), one index probe per key, in scope-key order:
 * every transaction that locks several rooms takes them in the same order, so two of them never
 * wait on each other.
 */
export const LOCK_ROOMS: SqlStatement = {
  name: 'chat_lock_rooms_v2',
  text: `SELECT r.* FROM (SELECT DISTINCT json_array_elements_text($1::json) AS scope_key) k
    CROSS JOIN LATERAL (SELECT ${ROOM_COLUMNS} FROM rooms WHERE rooms.scope_key = k.scope_key FOR UPDATE) r
    ORDER BY k.scope_key`,
};

/** Stored messages with the batch's (room, sender, idempotency key) ($1: [{room_id, sender_kind, sender_id, idempotency_key}]). */
export const FIND_BY_SENDER_KEYS: SqlStatement = {
  name: 'chat_find_by_sender_keys_v2',
  text: `SELECT m.* FROM json_to_recordset($1::json) AS k(room_id text, sender_kind text, sender_id text, idempotency_key text)
    CROSS JOIN LATERAL (
      SELECT ${MESSAGE_COLUMNS} FROM messages
      WHERE messages.room_id = k.room_id AND messages.sender_kind = k.sender_kind
        AND messages.sender_id = k.sender_id AND messages.idempotency_key = k.idempotency_key
      OFFSET 0
    ) m`,
};

/**
 * The messages idempotency keys name, for several lookups at once ($1: [{ord, scope_key,
 * sender_kind, sender_id, idempotency_key}]); each row carries the `ord` of its lookup. One probe of
 * the unique index per lookup.
 */
export const FIND_BY_IDEMPOTENCY_KEYS: SqlStatement = {
  name: 'chat_find_by_idempotency_keys_v1',
  text: `SELECT k.ord, m.* FROM json_to_recordset($1::json)
      AS k(ord integer, scope_key text, sender_kind text, sender_id text, idempotency_key text)
    CROSS JOIN LATERAL (
      SELECT ${MESSAGE_COLUMNS} FROM messages
      WHERE messages.room_id = (SELECT room_id FROM rooms WHERE rooms.scope_key = k.scope_key)
        AND messages.sender_kind = k.sender_kind AND messages.sender_id = k.sender_id
        AND messages.idempotency_key = k.idempotency_key
      OFFSET 0
    ) m`,
};

/**
 * Inserts messages ($1), moves room counters ($2), records owed mention fan-outs ($3) and writes the
 * outbox entries ($4) in one statement; returns each outbox entry's id with its room and seq.
 */
export const INSERT_MESSAGES: SqlStatement = {
  name: 'chat_insert_messages_v1',
  text: `WITH inserted AS (
      INSERT INTO messages (${MESSAGE_COLUMNS})
      SELECT m.room_id, m.seq, m.message_id, m.repository_id, m.branch_id, m.sender_kind, m.sender_id, m.request_id,
        m.idempotency_key, decode(m.body_base64, 'base64'), m.body_bytes, m.rendered_html, m.mentions, m.created_at,
        m.authorization_decision_id, m.authorizing_subject_id, m.authorizing_subject_kind, m.bot_credential_id, m.bot_grant_id
      FROM json_to_recordset($1::json) AS m(room_id text, seq bigint, message_id text, repository_id text, branch_id text,
        sender_kind text, sender_id text, request_id text, idempotency_key text, body_base64 text, body_bytes integer,
        rendered_html text, mentions jsonb, created_at timestamptz, authorization_decision_id text, authorizing_subject_id text,
        authorizing_subject_kind text, bot_credential_id text, bot_grant_id text)
    ), counters AS (
      UPDATE rooms SET last_seq = c.last_seq, last_message_at = c.last_message_at, last_message_id = c.last_message_id
      FROM json_to_recordset($2::json) AS c(room_id text, last_seq bigint, last_message_at timestamptz, last_message_id text)
      -- The ANY() lets the planner find the rooms by index, however few rows it expects from $2.
      WHERE rooms.room_id = c.room_id AND rooms.room_id = ANY(ARRAY(SELECT json_array_elements($2::json) ->> 'room_id'))
    ), fanout AS (
      INSERT INTO mention_fanout (message_id, room_id, seq, created_at, next_attempt_at)
      SELECT f.message_id, f.room_id, f.seq, f.created_at, f.created_at
      FROM json_to_recordset($3::json) AS f(message_id text, room_id text, seq bigint, created_at timestamptz)
      ON CONFLICT (message_id) DO NOTHING
    )
    INSERT INTO outbox (channel, scope_key, seq, payload)
    SELECT 'messages', o.room_id, o.seq, o.payload
    FROM json_to_recordset($4::json) AS o(room_id text, seq bigint, payload text)
    RETURNING id, scope_key, seq`,
};

/** Deletes published outbox entries ($1: JSON array of ids). */
export const DELETE_OUTBOX: SqlStatement = {
  name: 'chat_delete_outbox_v1',
  text: 'DELETE FROM outbox WHERE id = ANY(ARRAY(SELECT json_array_elements_text($1::json)::bigint))',
};

/** Raw row of the messages table, as pg (Buffer, string int8) or PGlite (Uint8Array, number) gives it. */
export interface RawMessageRow {
  room_id: string;
  seq: string | number;
  message_id: string;
  repository_id: string;
  branch_id: string | null;
  sender_kind: MessageRow['senderKind'];
  sender_id: string;
  request_id: string;
  idempotency_key: string;
  body_markdown: Uint8Array;
  body_bytes: number;
  rendered_html: string;
  mentions: MessageRow['mentions'];
  created_at: Date;
  authorization_decision_id: string | null;
  authorizing_subject_id: string | null;
  authorizing_subject_kind: MessageRow['authorizingSubjectKind'];
  bot_credential_id: string | null;
  bot_grant_id: string | null;
}

export interface RawRoomRow {
  room_id: string;
  scope_key: string;
  repository_id: string;
  branch_id: string | null;
  kind: RoomRow['kind'];
  state: RoomRow['state'];
  created_at: Date;
  sealed_at: Date | null;
  last_seq: string | number;
  last_message_at: Date | null;
  last_message_id: string | null;
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

export function messageRowFromSql(r: RawMessageRow): MessageRow {
  return {
    roomId: r.room_id,
    seq: Number(r.seq),
    messageId: r.message_id,
    repositoryId: r.repository_id,
    branchId: r.branch_id,
    senderKind: r.sender_kind,
    senderId: r.sender_id,
    requestId: r.request_id,
    idempotencyKey: r.idempotency_key,
    bodyMarkdown: utf8(r.body_markdown),
    bodyBytes: r.body_bytes,
    renderedHtml: r.rendered_html,
    mentions: r.mentions,
    createdAt: r.created_at,
    authorizationDecisionId: r.authorization_decision_id,
    authorizingSubjectId: r.authorizing_subject_id,
    authorizingSubjectKind: r.authorizing_subject_kind,
    botCredentialId: r.bot_credential_id,
    botGrantId: r.bot_grant_id,
  };
}

export function roomRowFromSql(r: RawRoomRow): RoomRow {
  return {
    roomId: r.room_id,
    scopeKey: r.scope_key,
    repositoryId: r.repository_id,
    branchId: r.branch_id,
    kind: r.kind,
    state: r.state,
    createdAt: r.created_at,
    sealedAt: r.sealed_at,
    lastSeq: Number(r.last_seq),
    lastMessageAt: r.last_message_at,
    lastMessageId: r.last_message_id,
  };
}

/** A message as a row of INSERT_MESSAGES' first parameter. */
export function messageRecord(m: MessageRow): Record<string, unknown> {
  return {
    room_id: m.roomId,
    seq: m.seq,
    message_id: m.messageId,
    repository_id: m.repositoryId,
    branch_id: m.branchId,
    sender_kind: m.senderKind,
    sender_id: m.senderId,
    request_id: m.requestId,
    idempotency_key: m.idempotencyKey,
    body_base64: Buffer.from(m.bodyMarkdown, 'utf8').toString('base64'),
    body_bytes: m.bodyBytes,
    rendered_html: m.renderedHtml,
    mentions: m.mentions,
    created_at: m.createdAt.toISOString(),
    authorization_decision_id: m.authorizationDecisionId,
    authorizing_subject_id: m.authorizingSubjectId,
    authorizing_subject_kind: m.authorizingSubjectKind,
    bot_credential_id: m.botCredentialId,
    bot_grant_id: m.botGrantId,
  };
}
