/**
 * Message search (docs/interface.md, "Extensions": search). Every term and phrase is a substring of
 * the message's `search_text` (its body, ASCII lowercased, whitespace joined: sql/functions/
 * chat_message_search_text.sql), which the pg_trgm index of migrations/0010_message_search.sql
 * answers for any 3 characters or more. Substrings are what make code findable: `config` is inside
 * `parse_config`, `parseConfig`, `config.max_retries` and `src/config/index.ts`, and `a1b2c3d` is
 * inside the full commit ID. Relevance counts a term found as a whole word (or identifier) above one
 * found inside a longer word, and a short message above a long one.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { messageRowFromSql, type RawMessageRow } from './message-sql.ts';
import type { MessageRow } from './schema.ts';
import { rowsOf } from './sql-script.ts';
import { SearchTimeoutError, storeCall } from './store-errors.ts';

export type SearchOrder = 'relevance' | 'newest';

/** Where to continue: the last row of the previous page, in the page's order. */
export type SearchPosition = { order: 'newest'; createdAtMs: number; messageId: string } | { order: 'relevance'; score: number; messageId: string };

export interface MessageSearchQuery {
  repositoryId: string;
  /** One room of the repository: `null` its repository room, a branch ID that branch's room; absent, all its rooms. */
  branchId?: string | null;
  /** Each must be found; ASCII letters lowercased, every run of whitespace one space (as search_text is). */
  terms: string[];
  phrases: string[];
  /** Sent by any of these principals. */
  senderIds: string[];
  /** Mentioning every one of these principals. */
  mentionIds: string[];
  /** created_at < before */
  before?: Date;
  /** created_at >= after */
  after?: Date;
  hasCode: boolean;
  hasLink: boolean;
  order: SearchOrder;
  limit: number;
  position?: SearchPosition;
  /** The query's time bound, past which it fails with SearchTimeoutError. */
  timeoutMs: number;
}

export interface SearchHit {
  message: MessageRow;
  /** Higher is more relevant; the same message and query always score the same. */
  score: number;
}

export interface SearchPage {
  hits: SearchHit[];
  /** Whether rows past this page match too. */
  hasMore: boolean;
}

const QUERY_CANCELED = '57014';

type RawSearchRow = RawMessageRow & { score: number | string };

/** Every column of a message but search_text, which only the WHERE clause needs. */
const MESSAGE_COLUMNS = sql.raw(
  ['room_id', 'seq', 'message_id', 'repository_id', 'branch_id', 'sender_kind', 'sender_id', 'request_id', 'idempotency_key',
    'body_markdown', 'body_bytes', 'rendered_html', 'mentions', 'created_at', 'authorization_decision_id', 'authorizing_subject_id',
    'authorizing_subject_kind', 'bot_credential_id', 'bot_grant_id'].map((c) => `m.${c}`).join(', '),
);

/** Runs one search in its own transaction, bounded by `query.timeoutMs` (MessageRepository.search). */
export function searchMessages(db: ChatDb, query: MessageSearchQuery): Promise<SearchPage> {
  return storeCall(async () => {
    try {
      const rows = await db.transaction(async (tx) => {
        // Bounds this transaction's statements only, on a pooled connection as on its own.
        await tx.execute(sql.raw(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(query.timeoutMs))}`));
        return rowsOf<RawSearchRow>(await tx.execute(searchStatement(query)));
      });
      const hits = rows.slice(0, query.limit).map((row) => ({ message: messageRowFromSql({ ...row, created_at: new Date(row.created_at) }), score: Number(row.score) }));
      return { hits, hasMore: rows.length > query.limit };
    } catch (err) {
      if (isQueryCanceled(err)) throw new SearchTimeoutError(query.timeoutMs, { cause: err });
      throw err;
    }
  });
}

function isQueryCanceled(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === QUERY_CANCELED) return true;
  }
  return false;
}

function searchStatement(query: MessageSearchQuery): SQL {
  const conditions: SQL[] = [sql`m.repository_id = ${query.repositoryId}`];
  // The rooms table names the repository's rooms, so a message is found only through a room of it.
  if (query.branchId === undefined) {
    conditions.push(sql`m.room_id IN (SELECT r.room_id FROM rooms r WHERE r.repository_id = ${query.repositoryId})`);
  } else if (query.branchId === null) {
    conditions.push(sql`m.room_id IN (SELECT r.room_id FROM rooms r WHERE r.repository_id = ${query.repositoryId} AND r.kind = 'repository')`);
  } else {
    conditions.push(sql`m.room_id IN (SELECT r.room_id FROM rooms r WHERE r.repository_id = ${query.repositoryId} AND r.branch_id = ${query.branchId})`);
  }
  for (const needle of [...query.terms, ...query.phrases]) conditions.push(sql`m.search_text LIKE ${likePattern(needle)}`);
  if (query.senderIds.length > 0) conditions.push(sql`m.sender_id IN (${sql.join(query.senderIds.map((id) => sql`${id}`), sql`, `)})`);
  for (const id of query.mentionIds) conditions.push(sql`m.mentions @> ${JSON.stringify([{ principalId: id }])}::jsonb`);
  if (query.before) conditions.push(sql`m.created_at < ${query.before.toISOString()}::timestamptz`);
  if (query.after) conditions.push(sql`m.created_at >= ${query.after.toISOString()}::timestamptz`);
  // Inline code and fenced blocks both hold a pair of backticks.
  if (query.hasCode) conditions.push(sql`m.search_text LIKE ${'%`%`%'}`);
  if (query.hasLink) conditions.push(sql`(m.search_text LIKE ${'%http://_%'} OR m.search_text LIKE ${'%https://_%'})`);

  const score = scoreExpression(query);
  const position = query.position;
  if (position?.order === 'newest') {
    conditions.push(sql`(m.created_at, m.message_id) < (${new Date(position.createdAtMs).toISOString()}::timestamptz, ${position.messageId})`);
  }
  const where = sql.join(conditions, sql` AND `);
  const take = query.limit + 1;
  if (query.order === 'newest') {
    return sql`SELECT ${MESSAGE_COLUMNS}, ${score} AS score FROM messages m WHERE ${where}
      ORDER BY m.created_at DESC, m.message_id DESC LIMIT ${take}`;
  }
  const after = position?.order === 'relevance' ? sql`WHERE (s.score, s.message_id) < (${position.score}::float8, ${position.messageId})` : sql``;
  return sql`SELECT * FROM (SELECT ${MESSAGE_COLUMNS}, ${score} AS score FROM messages m WHERE ${where}) s ${after}
    ORDER BY s.score DESC, s.message_id DESC LIMIT ${take}`;
}

/**
 * 2 per term or phrase found as a whole word (not inside a longer word or identifier), 1 per one
 * found inside, divided by a factor that grows slowly with the message's length.
 */
function scoreExpression(query: MessageSearchQuery): SQL {
  const needles = [...query.terms, ...query.phrases];
  const parts = needles.map((needle) => sql`(CASE WHEN m.search_text ~ ${wholeWordPattern(needle)} THEN 2 ELSE 1 END)`);
  const sum = parts.length > 0 ? sql.join(parts, sql` + `) : sql`1`;
  return sql`((${sum})::float8 / (1 + ln(1 + length(m.search_text) / 400.0)))`;
}

/** A LIKE pattern that finds `needle` anywhere (backslash is LIKE's escape character). */
export function likePattern(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A POSIX regular expression that finds `needle` with no letter, digit or `_` either side. */
export function wholeWordPattern(needle: string): string {
  const literal = needle.replace(/[^\p{L}\p{N} ]/gu, (c) => `\\${c}`);
  return `(^|[^[:alnum:]_])${literal}($|[^[:alnum:]_])`;
}
