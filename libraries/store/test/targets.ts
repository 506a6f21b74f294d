import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ulid } from 'ulid';
import { openDatabase, pgliteDatabase, type Database } from '../src/database.ts';
import { migrate } from '../src/migrate.ts';
import { writePgliteTemplate } from '../src/pglite-template.ts';
import { startPgliteThread } from '../src/pglite-thread.ts';

const BASE_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/**
 * The store's tests keep to a schema of their own: other suites share the database, and rows they
 * leave behind (due fan-out rows, say) must not leak into queries that scan a whole table.
 */
export const TEST_SCHEMA = 'chat_store_test';

/** The test database with `schema` first on the search path. */
function databaseUrlFor(schema: string): string {
  return `${BASE_DATABASE_URL}${BASE_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** PostgreSQL used by integration tests, pointed at the store's own schema. */
export const TEST_DATABASE_URL = databaseUrlFor(TEST_SCHEMA);

export async function ensureTestSchema(): Promise<void> {
  await ensureSharedExtensions();
  await adminQuery(`CREATE SCHEMA IF NOT EXISTS ${TEST_SCHEMA}`).catch((err: { code?: string }) => {
    // Two suites creating it at once: the loser sees a unique violation; the schema exists either way.
    if (err.code !== '23505') throw err;
  });
}

/**
 * An extension lives in one schema per database, and the migration installs pg_trgm in the first
 * schema of its search path when the database has none: put it in `public` first, so dropping a
 * test's own schema never drops the extension (and with it the indexes of every other schema).
 */
async function ensureSharedExtensions(): Promise<void> {
  await adminQuery('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch((err: { code?: string }) => {
    // Two suites creating it at once: the loser sees a unique violation; it exists either way.
    if (err.code !== '23505') throw err;
  });
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: BASE_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
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

/** A database nothing has migrated, and how to open more handles on it (PostgreSQL only). */
export interface FreshDatabase {
  database: Database;
  /** Its PostgreSQL URL; none on PGlite. */
  url?: string;
  /** Another handle with its own connections, as another process would have; none on PGlite. */
  openAnother?: () => Promise<Database>;
  cleanup(): Promise<void>;
}

/**
 * Empty databases, for tests of the migration runner: on PostgreSQL a schema of its own, dropped at
 * cleanup; on PGlite an in-memory database that initdb made (no template, so nothing applied).
 */
export const freshTargets: { name: string; open(): Promise<FreshDatabase> }[] = [
  {
    name: 'postgres',
    async open() {
      const schema = `chat_migrate_test_${ulid().toLowerCase()}`;
      await ensureSharedExtensions();
      await adminQuery(`CREATE SCHEMA ${schema}`);
      const handles: Database[] = [];
      const openAnother = async () => {
        const handle = await openDatabase({ kind: 'postgres', url: databaseUrlFor(schema), poolSize: 2 });
        handles.push(handle);
        return handle;
      };
      return {
        database: await openAnother(),
        url: databaseUrlFor(schema),
        openAnother,
        async cleanup() {
          for (const handle of handles) await handle.close();
          await adminQuery(`DROP SCHEMA ${schema} CASCADE`);
        },
      };
    },
  },
  {
    name: 'pglite',
    async open() {
      const dataDir = await mkdtemp(join(tmpdir(), 'chat-pglite-fresh-'));
      const database = pgliteDatabase(await startPgliteThread(dataDir, { template: await emptyPgliteTemplate() }));
      return {
        database,
        async cleanup() {
          await database.close();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
];

let emptyTemplate: Promise<string> | undefined;

/**
 * A PGlite template of a database no migration or function file reached (only the runner's empty
 * bookkeeping tables): a fresh database loads in well under a second from it, where initdb takes
 * 4 to 13 s. Made once per test process, and removed at its exit.
 */
function emptyPgliteTemplate(): Promise<string> {
  emptyTemplate ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chat-pglite-empty-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const template = join(dir, 'empty.tar.gz');
    await writePgliteTemplate(template, { migrationsDir: dir, functionsDir: dir });
    return template;
  })();
  return emptyTemplate;
}
