/**
 * The migration runner on a live database: statements that give up on a lock instead of queueing a
 * table's queries behind them, migrations outside a transaction, and what each leaves behind.
 */
import { expect } from 'chai';
import { sql } from 'drizzle-orm';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freshTargets, type FreshDatabase } from '../test/targets.ts';
import { openDatabase } from './database.ts';
import { migrate, MigrationLockTimeoutError } from './migrate.ts';
import { rowsOf } from './sql-script.ts';
import { sqlFileNames, STORE_SQL_SOURCES, type SqlSources } from './sql-sources.ts';
import { rejection } from '../test/rejection.ts';

const STORE_MIGRATIONS = sqlFileNames(STORE_SQL_SOURCES.migrationsDir);
const FAST = { lockTimeoutMs: 200, retryDelayMs: 50 };

/** The store's migrations in a temp folder, with test migrations to add after them. */
async function migrationsCopy(): Promise<{ sources: SqlSources; add(name: string, text: string): Promise<void>; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-migrations-'));
  await cp(STORE_SQL_SOURCES.migrationsDir, dir, { recursive: true });
  return {
    sources: { ...STORE_SQL_SOURCES, migrationsDir: dir },
    add: (name, text) => writeFile(join(dir, name), text),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

for (const target of freshTargets) {
  describe(`migrate on ${target.name}: locks and migrations outside a transaction`, function () {
    this.timeout(120_000);
    let fresh: FreshDatabase;
    let copy: Awaited<ReturnType<typeof migrationsCopy>>;

    beforeEach(async () => {
      fresh = await target.open();
      copy = await migrationsCopy();
    });
    afterEach(async () => {
      await fresh.cleanup();
      await copy.remove();
    });

    it('runs a no-transaction migration statement by statement (CREATE INDEX CONCURRENTLY), once', async () => {
      await copy.add('9001_test_table.sql', 'CREATE TABLE chat_test_rows (id integer, body text);\nINSERT INTO chat_test_rows SELECT g, g::text FROM generate_series(1, 100) g;\n');
      await copy.add('9002_test_index.sql', '-- migrate: no-transaction\n-- An index built without blocking writes.\nCREATE INDEX CONCURRENTLY IF NOT EXISTS chat_test_rows_body ON chat_test_rows (body);\n');
      const first = await migrate(fresh.database, copy.sources);
      expect(first.migrations).to.deep.equal([...STORE_MIGRATIONS, '9001_test_table.sql', '9002_test_index.sql']);
      const valid = rowsOf<{ valid: boolean }>(await fresh.database.db.execute(sql`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'chat_test_rows_body'::regclass`));
      expect(valid).to.deep.equal([{ valid: true }]);
      expect((await migrate(fresh.database, copy.sources)).migrations).to.deep.equal([]);
    });

    if (target.name !== 'postgres') return;

    it('gives up on a lock held by a long transaction, so the table\'s other queries wait at most the lock timeout, and names the migration', async () => {
      await migrate(fresh.database, copy.sources);
      await copy.add('9003_test_column.sql', 'ALTER TABLE messages ADD COLUMN chat_test_extra integer;\n');
      const holder = new pg.Client({ connectionString: fresh.url });
      const reader = new pg.Client({ connectionString: fresh.url });
      await Promise.all([holder.connect(), reader.connect()]);
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT count(*) FROM messages');
        const timeouts: string[] = [];
        const migrating = migrate(fresh.database, copy.sources, { ...FAST, lockRetries: 2, onLockTimeout: (unit) => timeouts.push(unit) });
        // A reader arriving while the ALTER waits queues behind it: for one lock timeout at most.
        const readerDelays: number[] = [];
        for (let i = 0; i < 5; i++) {
          const started = Date.now();
          await reader.query('SELECT count(*) FROM messages');
          readerDelays.push(Date.now() - started);
          await new Promise((r) => setTimeout(r, 40));
        }
        const err = await rejection(migrating);
        expect(err).to.be.instanceOf(MigrationLockTimeoutError);
        expect(err.message).to.match(/^9003_test_column\.sql: a statement waited more than 200 ms for a lock in each of 3 tries/);
        expect(timeouts).to.deep.equal(['9003_test_column.sql', '9003_test_column.sql']);
        expect(Math.max(...readerDelays)).to.be.below(1000);
        await holder.query('COMMIT');
        expect((await migrate(fresh.database, copy.sources, FAST)).migrations).to.deep.equal(['9003_test_column.sql']);
      } finally {
        await holder.end();
        await reader.end();
      }
    });

    it('tries a migration again once the lock is free, and applies it', async () => {
      await migrate(fresh.database, copy.sources);
      await copy.add('9003_test_column.sql', 'ALTER TABLE messages ADD COLUMN chat_test_extra integer;\n');
      const holder = new pg.Client({ connectionString: fresh.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT count(*) FROM messages');
        const timeouts: number[] = [];
        const migrating = migrate(fresh.database, copy.sources, { ...FAST, lockRetries: 20, onLockTimeout: (_unit, attempt) => timeouts.push(attempt) });
        await new Promise((r) => setTimeout(r, 500));
        await holder.query('COMMIT');
        expect((await migrating).migrations).to.deep.equal(['9003_test_column.sql']);
        expect(timeouts.length).to.be.at.least(1);
      } finally {
        await holder.end();
      }
    });

    it('fails on an invalid index an interrupted concurrent build left, naming it, and does not record the migration', async () => {
      await copy.add('9001_test_table.sql', 'CREATE TABLE chat_test_rows (id integer);\nINSERT INTO chat_test_rows VALUES (1), (1);\n');
      await copy.add('9002_test_unique.sql', '-- migrate: no-transaction\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS chat_test_rows_id ON chat_test_rows (id);\n');
      const first = await rejection(migrate(fresh.database, copy.sources));
      expect(first.message).to.match(/could not create unique index "chat_test_rows_id"/);
      const second = await rejection(migrate(fresh.database, copy.sources));
      expect(second.message).to.equal('9002_test_unique.sql: invalid index chat_test_rows_id (an interrupted CREATE INDEX CONCURRENTLY); drop it with DROP INDEX CONCURRENTLY and run again');
      await fresh.database.exec('DROP INDEX chat_test_rows_id; DELETE FROM chat_test_rows WHERE ctid = (SELECT max(ctid) FROM chat_test_rows)');
      expect((await migrate(fresh.database, copy.sources)).migrations).to.deep.equal(['9002_test_unique.sql']);
    });

    it('lets runners that start at once take turns on a no-transaction migration: one applies it', async () => {
      await copy.add('9001_test_table.sql', 'CREATE TABLE chat_test_rows (id integer);\n');
      await copy.add('9002_test_index.sql', '-- migrate: no-transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS chat_test_rows_id ON chat_test_rows (id);\n');
      const other = await fresh.openAnother!();
      const results = await Promise.all([migrate(fresh.database, copy.sources), migrate(other, copy.sources)]);
      const applied = results.flatMap((r) => r.migrations);
      expect(applied.filter((m) => m === '9002_test_index.sql')).to.have.length(1);
      expect(applied).to.have.length(STORE_MIGRATIONS.length + 2);
    });

    it('refuses a no-transaction migration through a transaction pooler, which has no session to hold', async () => {
      await copy.add('9002_test_index.sql', '-- migrate: no-transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS messages_test ON messages (room_id);\n');
      const pooled = await openDatabase({ kind: 'postgres', url: fresh.url!, pooler: 'transaction', poolSize: 2 });
      try {
        const err = await rejection(migrate(pooled, copy.sources));
        expect(err.message).to.equal('a migration outside a transaction needs a session: connect to PostgreSQL directly (DATABASE_POOLER=none), not through a transaction pooler');
      } finally {
        await pooled.close();
      }
    });
  });
}
