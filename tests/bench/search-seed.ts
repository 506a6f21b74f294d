import { ulid } from 'ulid';
import { seededRandom } from '../harness/seeded-random.ts';
import { backgroundWriter } from '../search/corpus-generator.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { openSeedSession, type SeedSession } from './seed-session.ts';

/** A store to search: repositories, each with its repository room and branch rooms, and the messages spread over them. */
export interface SearchShape {
  /** Every room: the first of each repository its repository room (`branchId` null), the rest branch rooms. */
  rooms: Array<{ repositoryId: string; roomId: string; branchId: string | null }>;
  messages: number;
  /** Senders of the seeded messages, used in turn (the corpus's people and bot map onto them). */
  senders: string[];
  seed: number;
}

/** The search index of migrations/0012_message_search_by_repository.sql. */
export const SEARCH_INDEX = 'messages_search_repository_trgm_idx';

/** Messages generated and inserted per statement (one transaction each). */
const ROWS_PER_STATEMENT = 20_000;

/**
 * Fills a migrated PostgreSQL store with `shape.messages` messages of the search relevance corpus's
 * background (tests/search/corpus-generator.ts: prose, code, paths, URLs, commit IDs, traces,
 * identifiers, mentions), in the state the append path leaves behind: rooms' seq 1..n without a
 * gap and their last_seq, last_message_at and last_message_id naming their last message; canonical
 * ULIDs whose time part is created_at (one millisecond per message, rising with seq in a room);
 * `search_text` written by the real chat_message_search_text(); rendered_html the body escaped in a
 * paragraph (the renderer's output for plain prose, which is what search reads past); no mentions
 * bound, outbox or fan-out rows. Message k goes to room k mod rooms, in time order, ending an hour
 * before now. The bodies are generated here and sent in batches; everything else is set-based SQL.
 */
export async function seedSearchStore(databaseUrl: string, shape: SearchShape, progress: (line: string) => void = () => {}): Promise<{ messages: number; seconds: number }> {
  const rooms = shape.rooms.length;
  const client = await openSeedSession({ kind: 'postgres', url: databaseUrl });
  const started = monotonicMs();
  try {
    await client.query(`SET synchronous_commit = off`);
    await client.query(`SET work_mem = '256MB'`);
    await client.query(`CREATE TEMP TABLE search_rooms (i integer PRIMARY KEY, room_id text NOT NULL, repository_id text NOT NULL, branch_id text)`);
    await client.query(
      `INSERT INTO search_rooms SELECT ord - 1, room_id, repository_id, branch_id FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(room_id, repository_id, branch_id, ord)`,
      [shape.rooms.map((r) => r.roomId), shape.rooms.map((r) => r.repositoryId), shape.rooms.map((r) => r.branchId)],
    );
    const baseMs = Date.now() - 3_600_000 - shape.messages;
    await client.query(
      `INSERT INTO rooms (room_id, scope_key, repository_id, branch_id, kind, state, created_at)
       SELECT room_id, CASE WHEN branch_id IS NULL THEN 'repo:' || repository_id ELSE 'branch:' || repository_id || ':' || branch_id END,
         repository_id, branch_id, CASE WHEN branch_id IS NULL THEN 'repository' ELSE 'branch' END, 'active',
         timestamptz 'epoch' + $1::bigint * interval '1 millisecond'
       FROM search_rooms ORDER BY i`,
      [baseMs - 1000],
    );
    const writer = backgroundWriter(seededRandom(shape.seed));
    const senderOf = new Map<string, string>();
    const principal = (name: string) => {
      let id = senderOf.get(name);
      if (id === undefined) senderOf.set(name, (id = shape.senders[senderOf.size % shape.senders.length]!));
      return id;
    };
    for (let from = 0; from < shape.messages; from += ROWS_PER_STATEMENT) {
      const count = Math.min(ROWS_PER_STATEMENT, shape.messages - from);
      const ids: string[] = [];
      const senders: string[] = [];
      const bodies: string[] = [];
      for (let k = from; k < from + count; k++) {
        const message = writer.next();
        ids.push(ulid(baseMs + k));
        senders.push(principal(message.sender));
        bodies.push(message.body.replace(/@\{([a-z]+)\}/g, (_, name: string) => `@${principal(name)}`));
      }
      await insertMessages(client, { from, rooms, baseMs, ids, senders, bodies });
      if (from === 0 || Math.floor((from + count) / 100_000) !== Math.floor(from / 100_000)) {
        progress(`${(from + count).toLocaleString('en-US')} of ${shape.messages.toLocaleString('en-US')} messages (${((monotonicMs() - started) / 1000).toFixed(0)} s)`);
      }
    }
    await client.query(
      `UPDATE rooms SET last_seq = last.seq, last_message_at = last.created_at, last_message_id = last.message_id
       FROM search_rooms g, LATERAL (SELECT seq, created_at, message_id FROM messages m WHERE m.room_id = g.room_id ORDER BY seq DESC LIMIT 1) last
       WHERE rooms.room_id = g.room_id`,
    );
    progress('VACUUM ANALYZE, CHECKPOINT');
    await client.query('VACUUM (ANALYZE) rooms, messages');
    await client.query('CHECKPOINT');
    return { messages: shape.messages, seconds: (monotonicMs() - started) / 1000 };
  } finally {
    await client.close();
  }
}

async function insertMessages(client: SeedSession, batch: { from: number; rooms: number; baseMs: number; ids: string[]; senders: string[]; bodies: string[] }): Promise<void> {
  await client.query(
    `INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id, request_id,
       idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at, search_text)
     SELECT r.room_id, k / $5 + 1, m.message_id, r.repository_id, r.branch_id, 'user', m.sender_id, 'req_search_' || k,
       m.message_id, b.bytes, octet_length(b.bytes),
       '<p>' || replace(replace(replace(m.body, '&', '&amp;'), '<', '&lt;'), '>', '&gt;') || '</p>' || chr(10),
       NULL, timestamptz 'epoch' + ($6::bigint + k) * interval '1 millisecond', chat_message_search_text(b.bytes)
     FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS m(message_id, sender_id, body, ord),
       LATERAL (SELECT $4::bigint + m.ord - 1 AS k) n,
       LATERAL (SELECT convert_to(m.body, 'UTF8') AS bytes) b,
       search_rooms r
     WHERE r.i = k % $5
     ORDER BY k`,
    [batch.ids, batch.senders, batch.bodies, batch.from, batch.rooms, batch.baseMs],
  );
}

/** Drops the trigram index: appends then run without it. */
export async function dropSearchIndex(databaseUrl: string): Promise<void> {
  const client = await openSeedSession({ kind: 'postgres', url: databaseUrl });
  try {
    await client.query(`DROP INDEX IF EXISTS ${SEARCH_INDEX}`);
  } finally {
    await client.close();
  }
}

/** Builds the trigram index as the migration does (then VACUUM ANALYZE, CHECKPOINT); the build's seconds. */
export async function buildSearchIndex(databaseUrl: string): Promise<number> {
  const client = await openSeedSession({ kind: 'postgres', url: databaseUrl });
  const started = monotonicMs();
  try {
    await client.query(`SET maintenance_work_mem = '512MB'`);
    // The operator class named with the extension's schema, as migrations/0012_message_search_by_repository.sql does.
    const [statement] = await client.query<{ sql: string }>(
      `SELECT format('CREATE INDEX ${SEARCH_INDEX} ON messages USING gin (repository_id, search_text %I.gin_trgm_ops) WITH (fastupdate = off)', n.nspname) AS sql
       FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
    );
    if (!statement) throw new Error('pg_trgm is not installed in the bench database');
    await client.query(statement.sql);
    const seconds = (monotonicMs() - started) / 1000;
    await client.query('VACUUM (ANALYZE) messages');
    await client.query('CHECKPOINT');
    return seconds;
  } finally {
    await client.close();
  }
}
