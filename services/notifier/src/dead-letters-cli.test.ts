import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import pg from 'pg';
import { ulid } from 'ulid';
import { migrate, openDatabase, type Database } from '@chat/store';

const BASE_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CLI = fileURLToPath(new URL('./dead-letters-cli.ts', import.meta.url));
const run = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('dead-letters-cli: an operator lists and requeues dead mention fanouts', function () {
  this.timeout(120_000);
  // A schema of its own: the notifier suites' sweepers would claim requeued rows.
  const schema = `dead_letters_cli_${ulid().toLowerCase()}`;
  const url = `${BASE_DATABASE_URL}${BASE_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  let admin: pg.Client;
  let database: Database;

  const cli = async (...args: string[]): Promise<CliResult> => {
    const env = { ...process.env, DATABASE_URL: url, NODE_ENV: 'development' };
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', CLI, ...args], { env });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const failed = err as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };
  const dead = async (messageId: string, roomId: string, seq: number) =>
    admin.query(`INSERT INTO ${schema}.mention_fanout (message_id, room_id, seq, created_at, next_attempt_at, attempts, last_error, dead) VALUES ($1, $2, $3, now(), now() + interval '1 hour', 5, 'core: 503\nafter 5 tries', true)`, [messageId, roomId, seq]);
  const row = async (messageId: string) => (await admin.query(`SELECT dead, attempts FROM ${schema}.mention_fanout WHERE message_id = $1`, [messageId])).rows[0];

  before(async () => {
    admin = new pg.Client({ connectionString: BASE_DATABASE_URL });
    await admin.connect();
    // Shared extensions stay in public, so dropping this schema drops none of them.
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch(() => undefined);
    await admin.query('CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public').catch(() => undefined);
    await admin.query(`CREATE SCHEMA ${schema}`);
    database = await openDatabase({ kind: 'postgres', url, poolSize: 2 });
    await migrate(database);
  });
  after(async () => {
    await database?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('lists dead letters one per line, each error on its line', async () => {
    await dead('01JLISTED0000000000000000A', 'room-a', 7);
    const { code, stdout } = await cli('list');
    expect(code).to.equal(0);
    expect(stdout).to.equal('01JLISTED0000000000000000A\troom=room-a\tseq=7\tattempts=5\tcore: 503 after 5 tries\n');
  });

  it('requeues by message, by room and all, printing what it gave back', async () => {
    await dead('01JROOMB00000000000000000A', 'room-b', 1);
    await dead('01JROOMB00000000000000000B', 'room-b', 2);
    const one = await cli('requeue', '--message', '01JLISTED0000000000000000A', '--message', '01JNOSUCH0000000000000000A');
    expect(one).to.deep.include({ code: 0, stdout: '01JLISTED0000000000000000A\n' });
    expect(one.stderr).to.equal('requeued 1\n');
    expect(await row('01JLISTED0000000000000000A')).to.deep.equal({ dead: false, attempts: 0 });
    expect((await cli('requeue', '--room', 'room-b')).stdout).to.equal('01JROOMB00000000000000000A\n01JROOMB00000000000000000B\n');
    await dead('01JALL0000000000000000000A', 'room-c', 1);
    expect((await cli('requeue', '--all')).stdout).to.equal('01JALL0000000000000000000A\n');
    expect((await cli('list')).stdout).to.equal('');
  });

  it('refuses a usage error with exit status 2 and the usage', async () => {
    for (const args of [[], ['requeue'], ['requeue', '--all', '--room', 'x'], ['list', '--limit', '0'], ['drop']]) {
      const { code, stderr } = await cli(...args);
      expect(code, args.join(' ')).to.equal(2);
      expect(stderr, args.join(' ')).to.contain('usage: dead-letters-cli');
    }
  });
});
