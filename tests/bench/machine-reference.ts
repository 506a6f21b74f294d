import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createScratchDatabase } from '../harness/scratch-database.ts';

const run = promisify(execFile);

/** What the append targets were set from: raw PostgreSQL on the reference machine. */
export const REFERENCE_TPS = { oneRoom: 2000, hundredRooms: 5800 };

export interface MachineReference {
  oneRoomTps: number;
  hundredRoomsTps: number;
}

/**
 * Raw PostgreSQL on this machine, in the shape the append targets were set from: 8 clients, each
 * transaction one counter update plus one insert, into 1 room or over 100. pgbench (C, libpq) is the
 * client. Undefined when pgbench is not installed.
 */
export async function measureMachineReference(options: { seconds: number }): Promise<MachineReference | undefined> {
  const pgbench = findPgbench();
  if (!pgbench) return undefined;
  const database = await createScratchDatabase('bench_reference');
  const scripts = await mkdtemp(join(tmpdir(), 'chat-pgbench-'));
  try {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query(`CREATE TABLE rooms (id int PRIMARY KEY, seq bigint NOT NULL DEFAULT 0);
      INSERT INTO rooms SELECT g FROM generate_series(1, 100) g;
      CREATE TABLE messages (room int, seq bigint, body text, created timestamptz DEFAULT now(), PRIMARY KEY (room, seq));`);
    await client.end();
    const transaction = (room: string) => `\\set r ${room}
BEGIN;
UPDATE rooms SET seq = seq + 1 WHERE id = :r;
INSERT INTO messages (room, seq, body) SELECT :r, seq, 'bench message body' FROM rooms WHERE id = :r;
COMMIT;
`;
    const tps = async (name: string, room: string) => {
      const file = join(scripts, `${name}.sql`);
      await writeFile(file, transaction(room));
      const url = new URL(database.url);
      const { stdout } = await run(pgbench, ['-n', '-c', '8', '-j', '2', '-T', String(options.seconds), '-f', file, '-h', url.hostname, '-p', url.port || '5432', '-U', url.username || 'postgres', url.pathname.slice(1)]);
      const match = /tps = ([\d.]+)/.exec(stdout);
      if (!match) throw new Error(`pgbench printed no tps: ${stdout}`);
      return Number(match[1]);
    };
    return { oneRoomTps: await tps('one-room', '1'), hundredRoomsTps: await tps('hundred-rooms', 'random(1, 100)') };
  } finally {
    await rm(scripts, { recursive: true, force: true });
    await database.drop();
  }
}

/** pgbench of the newest PostgreSQL installed, or the one on PATH. */
export function findPgbench(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  for (const version of versions) {
    const path = join(root, version, 'bin', 'pgbench');
    if (existsSync(path)) return path;
  }
  const onPath = (process.env.PATH ?? '').split(':').map((dir) => join(dir, 'pgbench'));
  return onPath.find((path) => existsSync(path));
}
