import type { SqlStatement } from './sql-client.ts';
import type { MessageRow } from './schema.ts';

/**
 * The append path's statements, by hand. Each has fixed text whatever the batch size: rows travel
 * as one JSON parameter read with `json_to_recordset`, so PostgreSQL keeps every statement prepared
 * per connection (behind a transaction pooler they run unnamed: sql-client.ts) and the same text
 * runs on PGlite. Bodies travel base64-encoded because they may
 * hold NUL, which JSON-to-text conversion refuses.
 *
 * A prepared statement keeps the generic plan it got after its first few runs, which on a new
 * database is a plan for nearly empty tables, and there the planner may choose any index whose
 * first column matches: a lookup by idempotency key could run on the (room_id, seq) primary key and
 * read a whole room per append. So lookups that choose between indexes run unnamed or by EXECUTE
 * (planned on every run).
 */

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
 * Runs a batch of append steps in one statement (`sql/functions/chat_append_messages_v4.sql`): one
 * row per step, with its `ord` in the batch, its outcome, and what the database decided for a
 * created message (its outbox id, room, seq, ID and time) or the stored message of a replay.
 */
export const APPEND_MESSAGES: SqlStatement = {
  name: 'chat_append_messages_v4',
  text: 'SELECT * FROM chat_append_messages_v4($1::json)',
};

/** Gives a unit back to the window it was taken in. */
export const RETURN_RATE_UNIT: SqlStatement = {
  name: 'chat_return_append_rate_unit_v1',
  text: 'SELECT chat_return_append_rate_unit($1, $2, $3, $4)',
};

/** Takes a unit of a budget outside an append (a search's): true when taken, NULL when spent. */
export const TAKE_RATE_UNIT: SqlStatement = {
  name: 'chat_take_append_rate_unit_v1',
  text: 'SELECT chat_take_append_rate_unit($1, $2, $3, $4, $5) AS taken',
};

/** Deletes rows of ended windows ($1: windows that started before, ms; $2: at most this many). */
export const SWEEP_RATE_WINDOWS: SqlStatement = {
  text: 'SELECT chat_sweep_append_rate_windows($1, $2) AS swept',
};

/** Deletes published outbox entries ($1: JSON array of ids). */
export const DELETE_OUTBOX: SqlStatement = {
  // Unnamed: a generic plan made while the outbox was small scans it whole on every delete, and
  // the outbox is mostly dead rows between vacuums.
  text: 'DELETE FROM outbox WHERE id IN (SELECT json_array_elements_text($1::json)::bigint)',
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

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * A stored message as the append function returns a replay (`to_jsonb` of its row): times as ISO
 * text, numbers as numbers, the body base64-encoded.
 */
export type JsonMessageRow = Omit<RawMessageRow, 'body_markdown' | 'created_at' | 'seq'> & { seq: number; created_at: string; body_base64: string };

export function messageRowFromJson(r: JsonMessageRow): MessageRow {
  return messageRowFromSql({ ...r, body_markdown: Buffer.from(r.body_base64, 'base64'), created_at: new Date(r.created_at) });
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

