import { randomBytes } from 'node:crypto';
import { monotonicMs } from './monotonic-clock.ts';
import { openSeedSession, type StoreLocation } from './seed-session.ts';

/**
 * Where a grown store's messages go: `rooms` branch rooms of one repository, `perRoom` messages each,
 * and the first room `bigRoomExtra` more (a room a million messages deep is where a deep cursor
 * would be slow if anything in the layout were not a keyed lookup).
 */
export interface GrowthShape {
  repositoryId: string;
  /** One branch per room, canonical ULIDs the fixture grants read on. */
  branchIds: string[];
  /** One room ID per branch, canonical ULIDs. */
  roomIds: string[];
  perRoom: number;
  bigRoomExtra: number;
  /** Senders, used in turn (as a room's writers would). */
  senders: string[];
}

export const growthMessageCount = (shape: GrowthShape) => shape.branchIds.length * shape.perRoom + shape.bigRoomExtra;

/** Rows inserted per statement: each statement is its own transaction, so WAL and locks stay bounded. */
const ROWS_PER_STATEMENT = 400_000;

/**
 * Fills a migrated store with `growthMessageCount(shape)` messages in set-based SQL, in the state the
 * append path leaves behind, so everything the store relies on holds:
 * - each room's seq runs 1..n without a gap and the room row's `last_seq`, `last_message_at` and
 *   `last_message_id` name its last message (the append function continues from them);
 * - message IDs are canonical ULIDs whose time part is `created_at` and which rise with seq within a
 *   room, so (createdAt, messageId) order is seq order; every message of a seed has its own
 *   millisecond and every seed its own tag in the random part, so IDs are unique across the store;
 * - every message has its idempotency row (the unique (room, sender, key) index entry) with a ULID key;
 * - nothing is left to relay or fan out: no outbox rows (they are deleted once published) and no
 *   mentions, so no `mention_fanout` rows.
 * Rows go in in time order (all rooms' seq 1, then seq 2, ...), the order organic traffic writes them,
 * so the indexes get the page layout the append path gives them rather than a bulk-sorted one.
 * Times lie in the past, ending an hour before now, so live appends continue after them.
 *
 * `store`: a PostgreSQL URL, or where the store is (an embedded PGlite folder no process has open).
 */
export async function seedGrowth(store: string | StoreLocation, shape: GrowthShape, progress: (line: string) => void = () => {}): Promise<{ messages: number; seconds: number }> {
  const rooms = shape.branchIds.length;
  if (shape.roomIds.length !== rooms || rooms === 0) throw new Error('growth seed: one room ID per branch');
  const total = growthMessageCount(shape);
  // ULID time parts from one aligned base: the base's upper 5 characters, then 5 characters of the
  // 25-bit offset, a plain SQL expression (a PL/pgSQL encoder would cost more than the inserts).
  const span = 2 ** 25;
  if (total >= span) throw new Error(`growth seed: at most ${span - 1} messages`);
  const baseMs = Math.floor((Date.now() - 3_600_000 - total) / span) * span;
  // Seeds of one store share time parts (same aligned base); a random tag per seed keeps IDs apart.
  const tag = Array.from(randomBytes(6), (b) => CROCKFORD[b & 31]).join('');
  const client = await openSeedSession(typeof store === 'string' ? { kind: 'postgres', url: store } : store);
  const started = monotonicMs();
  try {
    // Session settings of this loader only: nothing is lost if the seed has to start over.
    await client.query(`SET synchronous_commit = off`);
    await client.query(`SET work_mem = '256MB'`);
    await client.query(`CREATE TEMP TABLE growth_rooms (i integer PRIMARY KEY, room_id text NOT NULL, branch_id text NOT NULL)`);
    await client.query(
      `INSERT INTO growth_rooms SELECT r.ord - 1, r.room_id, b.branch_id
       FROM unnest($1::text[]) WITH ORDINALITY AS r(room_id, ord) JOIN unnest($2::text[]) WITH ORDINALITY AS b(branch_id, ord) USING (ord)`,
      [shape.roomIds, shape.branchIds],
    );
    const basePrefix = (await client.query<{ p: string }>(`SELECT substr(chat_ulid_time($1::bigint), 1, 5) AS p`, [baseMs]))[0]!.p;
    await client.query(
      `INSERT INTO rooms (room_id, scope_key, repository_id, branch_id, kind, state, created_at)
       SELECT room_id, 'branch:' || $1 || ':' || branch_id, $1, branch_id, 'branch', 'active', timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
       FROM growth_rooms ORDER BY i`,
      [shape.repositoryId, baseMs - 1000],
    );
    // Message k (0-based, time order) is at baseMs + k: seq s <= perRoom of room i is
    // k = (s - 1) * rooms + i; the big room's seq s > perRoom is k = perRoom * rooms + (s - perRoom - 1).
    const insert = `
      WITH m AS (
        SELECT r.room_id, r.branch_id, s AS seq,
          CASE WHEN s <= $3 THEN (s - 1) * $2 + r.i ELSE $3::bigint * $2 + (s - $3 - 1) END AS k
        FROM generate_series($4::bigint, $5::bigint) s
        JOIN growth_rooms r ON r.i <= $11
      ), u AS (
        SELECT m.*, $6 || ${b32('m.k', 5)} AS t FROM m
      ), inserted AS (
      INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id, request_id,
        idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at)
      SELECT room_id, seq, t || $10 || 'SEED0' || ${b32('k', 5)}, $1, branch_id, 'user', ($7::text[])[(k % $8) + 1],
        'req_growth_' || k, t || $10 || 'KEY0' || ${b32('k', 6)}, convert_to(body, 'UTF8'), octet_length(body),
        '<p>' || body || '</p>' || chr(10), NULL, timestamptz 'epoch' + ($9::bigint + k) * interval '1 millisecond'
      FROM u, LATERAL (SELECT 'Growth message ' || k || ' in room ' || branch_id || ': a line of review chat about the change under discussion.' AS body) b
      ORDER BY k
      RETURNING 1)
      SELECT count(*)::integer AS n FROM inserted`;
    const lastSeq = shape.perRoom + shape.bigRoomExtra;
    let inserted = 0;
    for (let from = 1, to = 0; from <= lastSeq; from = to + 1) {
      // Up to perRoom every seq is one row per room; past it, one row (the big room's): $11 is the last room index taking part.
      to = from <= shape.perRoom ? Math.min(shape.perRoom, from + Math.ceil(ROWS_PER_STATEMENT / rooms) - 1) : Math.min(lastSeq, from + ROWS_PER_STATEMENT - 1);
      const n = (await client.query<{ n: number }>(insert, [shape.repositoryId, rooms, shape.perRoom, from, to, basePrefix, shape.senders, shape.senders.length, baseMs, tag, from <= shape.perRoom ? rooms - 1 : 0]))[0]!.n;
      inserted += n;
      if (from === 1 || Math.floor(inserted / 1_000_000) !== Math.floor((inserted - n) / 1_000_000)) {
        progress(`${inserted.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} messages (${((monotonicMs() - started) / 1000).toFixed(0)} s)`);
      }
    }
    if (inserted !== total) throw new Error(`growth seed inserted ${inserted} messages, expected ${total}`);
    await client.query(
      `UPDATE rooms SET last_seq = last.seq, last_message_at = last.created_at, last_message_id = last.message_id
       FROM growth_rooms g, LATERAL (SELECT seq, created_at, message_id FROM messages m WHERE m.room_id = g.room_id ORDER BY seq DESC LIMIT 1) last
       WHERE rooms.room_id = g.room_id`,
    );
    progress('VACUUM ANALYZE, CHECKPOINT');
    await client.query('VACUUM (ANALYZE) rooms, messages');
    // The seed's dirty pages are written now, not by a checkpoint during the measurement after it.
    await client.query('CHECKPOINT');
    return { messages: inserted, seconds: (monotonicMs() - started) / 1000 };
  } finally {
    await client.close();
  }
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** SQL for the last `chars` Crockford base-32 digits of the bigint expression `value`. */
function b32(value: string, chars: number): string {
  const digits = Array.from({ length: chars }, (_, i) => {
    const shift = 5 * (chars - 1 - i);
    return `substr('${CROCKFORD}', ((${value} >> ${shift}) & 31)::integer + 1, 1)`;
  });
  return `(${digits.join(' || ')})`;
}
