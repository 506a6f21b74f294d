import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate, openDatabase } from '../../libraries/store/src/index.ts';
import { createScratchDatabase } from '../harness/scratch-database.ts';
import { findPgbench } from './machine-reference.ts';
import { postgresPidsOf } from './proc-stats.ts';
import { measureWindow } from './floor-window.ts';

/** The rooms the floor's appends are spread over, as the service's figure's 100 branch rooms. */
const ROOMS = 100;

/**
 * One append's transaction in SQL, as `chat_append_messages_v4` runs it for a batch of one: take the
 * sender's unit of the room's rate window, lock the room's row, insert the message (its search text
 * and every index of the store's schema included, the idempotency check being the insert's unique
 * index), insert its outbox entry and advance the room's counter. One statement, so one round trip
 * and one commit, as the service sends it.
 */
function appendScript(bodyMarkdown: string): string {
  const html = `<p>${bodyMarkdown}</p>\n`;
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return `\\set r random(1, ${ROOMS})
WITH unit AS (
  SELECT chat_take_append_rate_unit('user', 'u_bench_' || :client_id, 'scope_' || :r, 0, 2000000000) AS taken
), room AS (
  SELECT rooms.room_id, rooms.last_seq FROM rooms, unit WHERE rooms.scope_key = 'scope_' || :r AND unit.taken FOR UPDATE OF rooms
), message AS (
  INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id, request_id,
      idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at, authorization_decision_id,
      authorizing_subject_id, authorizing_subject_kind, search_text)
    SELECT room.room_id, room.last_seq + 1, lpad(:r::text, 4, '0') || lpad((room.last_seq + 1)::text, 22, '0'),
      'repo_bench', 'branch_' || :r, 'user', 'u_bench_' || :client_id, substr(md5(random()::text), 1, 26),
      substr(md5(random()::text), 1, 26), convert_to(${literal(bodyMarkdown)}, 'UTF8'), ${Buffer.byteLength(bodyMarkdown)},
      ${literal(html)}, NULL, clock_timestamp(), substr(md5(random()::text), 1, 26), 'u_bench_' || :client_id, 'user',
      chat_message_search_text(convert_to(${literal(bodyMarkdown)}, 'UTF8'))
    FROM room
    ON CONFLICT (room_id, sender_kind, sender_id, idempotency_key) DO NOTHING
    RETURNING room_id, seq, message_id, created_at
), outbox_entry AS (
  INSERT INTO outbox (channel, scope_key, seq, payload) SELECT 'messages', room_id, seq, NULL FROM message RETURNING id
), counter AS (
  UPDATE rooms SET last_seq = message.seq, last_message_at = message.created_at, last_message_id = message.message_id
    FROM message WHERE rooms.room_id = message.room_id
)
SELECT id FROM outbox_entry;
`;
}

export interface PostgresFloor {
  /** CPU µs per append transaction: pgbench and every PostgreSQL process. */
  cpuUs: number;
  pgbenchUs: number;
  postgresUs: number;
  transactionsPerSecond: number;
  clients: number;
}

/**
 * The append transaction in raw PostgreSQL at saturation: pgbench (C, libpq, prepared statements)
 * with `clients` connections runs {@link appendScript} over 100 rooms on a scratch database migrated
 * with the store's own migrations, so the tables, indexes and functions are the service's. CPU of
 * pgbench and of PostgreSQL (the scratch database's backends and the server's shared processes:
 * WAL writer, checkpointer, what the service's figure counts too) over a window inside the run. Undefined without pgbench.
 */
export async function measurePostgresFloor(options: { bodyMarkdown: string; clients: number; seconds: number; warmupSeconds: number }): Promise<PostgresFloor | undefined> {
  const pgbench = findPgbench();
  if (!pgbench) return undefined;
  const database = await createScratchDatabase('bench_floor');
  const scripts = await mkdtemp(join(tmpdir(), 'chat-floor-'));
  try {
    const store = await openDatabase({ kind: 'postgres', url: database.url });
    try {
      await migrate(store);
    } finally {
      await store.close();
    }
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(`INSERT INTO rooms (room_id, scope_key, repository_id, branch_id, kind, created_at)
        SELECT lpad(g::text, 26, '0'), 'scope_' || g, 'repo_bench', 'branch_' || g, 'branch', now() FROM generate_series(1, ${ROOMS}) g`);
      const file = join(scripts, 'append.sql');
      await writeFile(file, appendScript(options.bodyMarkdown));
      const url = new URL(database.url);
      const seconds = options.warmupSeconds + options.seconds + 2;
      const args = ['-n', '-M', 'prepared', '-c', String(options.clients), '-j', '2', '-T', String(seconds), '-f', file];
      const child = spawn(pgbench, [...args, '-h', url.hostname, '-p', url.port || '5432', '-U', url.username || 'postgres', url.pathname.slice(1)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const appended = async () => Number((await client.query<{ n: string }>('SELECT sum(last_seq) AS n FROM rooms')).rows[0]!.n);
      const window = await measureWindow({
        warmupSeconds: options.warmupSeconds,
        seconds: options.seconds,
        processes: async () => [{ label: 'pgbench', pid: child.pid! }, ...(await postgresPidsOf(url.pathname.slice(1))).map((pid) => ({ label: 'postgres', pid }))],
        count: appended,
      });
      const code = await exited;
      if (code !== 0) throw new Error(`pgbench exited with ${code}: ${output}`);
      const per = (label: string) => ((window.cpuMs[label] ?? 0) * 1000) / window.count;
      return {
        cpuUs: per('pgbench') + per('postgres'),
        pgbenchUs: per('pgbench'),
        postgresUs: per('postgres'),
        transactionsPerSecond: window.count / window.seconds,
        clients: options.clients,
      };
    } finally {
      await client.end();
    }
  } finally {
    await rm(scripts, { recursive: true, force: true });
    await database.drop();
  }
}
