import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, type Database } from '../src/index.ts';

import pg from 'pg';

const BASE_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/**
 * The store's tests keep to a schema of their own: other suites share the database, and rows they
 * leave behind (due fan-out rows, say) must not leak into queries that scan a whole table.
 */
export const TEST_SCHEMA = 'chat_store_test';
/** PostgreSQL used by integration tests, pointed at the store's own schema. */
export const TEST_DATABASE_URL = `${BASE_DATABASE_URL}${BASE_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${TEST_SCHEMA}`)}`;

export async function ensureTestSchema(): Promise<void> {
  const client = new pg.Client({ connectionString: BASE_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${TEST_SCHEMA}`);
  } catch (err) {
    // Two suites creating it at once: the loser sees a unique violation; the schema exists either way.
    if ((err as { code?: string }).code !== '23505') throw err;
  } finally {
    await client.end();
  }
}

export interface TestTarget {
  name: string;
  open(): Promise<{ database: Database; cleanup(): Promise<void> }>;
}

/** The two databases every store test runs on: real PostgreSQL and embedded PGlite in a temp folder. */
export const testTargets: TestTarget[] = [
  {
    name: 'postgres',
    async open() {
      await ensureTestSchema();
      const database = await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 20 });
      await migrate(database);
      return { database, cleanup: () => database.close() };
    },
  },
  {
    name: 'pglite',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'chat-pglite-'));
      const database = await openDatabase({ kind: 'pglite', dataDir: dir });
      await migrate(database);
      return {
        database,
        async cleanup() {
          await database.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
