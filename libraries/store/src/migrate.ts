/**
 * Brings a database to this build's schema and SQL functions:
 * 1. the schema migrations (`migrations/`), in name order, each once, recorded by name in
 *    `chat_migrations`, each in its own transaction, or, when its first line is
 *    `-- migrate: no-transaction`, statement by statement on one session (for what PostgreSQL
 *    refuses inside a transaction: `CREATE INDEX CONCURRENTLY`, `ALTER TYPE … ADD VALUE`);
 * 2. then the function files (`sql/functions/`, sql-functions.ts), each whose text differs from the
 *    one recorded in `chat_functions`, in one transaction. They come last, so a function's file, not
 *    a migration that once defined it, holds the body a database runs.
 *
 * Several runners may start at once: each unit above takes an advisory lock and reads the record
 * again under it, so the loser finds the winner's work done.
 *
 * Every statement waits at most `lockTimeoutMs` for a table lock. A DDL statement queued behind a
 * long transaction would otherwise make every query of that table queue behind it; it gives up
 * instead, and the unit is tried again later (`lockRetries` times, waits doubling), its transaction
 * rolled back. The statement timeout is lifted: an index build may take long, and what bounds it is
 * the Job's deadline, not a timeout meant for requests.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import type { ChatDb, Database, SessionQuery } from './database.ts';
import { applyFunctionFiles, readFunctionFiles } from './sql-functions.ts';
import { rowsOf, splitStatements } from './sql-script.ts';
import { sqlFileNames, STORE_SQL_SOURCES, type SqlSources } from './sql-sources.ts';

/** Arbitrary constant shared by every instance of this service. */
const MIGRATION_LOCK_ID = 7_216_530_113;

/** The first line of a migration that runs outside a transaction. */
const NO_TRANSACTION = /^--\s*migrate:\s*no-transaction\s*$/;

/** SQLSTATE lock_not_available: `lock_timeout` expired. */
const LOCK_NOT_AVAILABLE = '55P03';

export interface MigrateResult {
  /** Migration files applied by this call, in order. */
  migrations: string[];
  /** Functions (by file name without `.sql`) created or replaced by this call. */
  functions: string[];
}

export interface MigrateOptions {
  /** How long one statement waits for a lock before the unit is rolled back and tried again. @defaultValue 5000 */
  lockTimeoutMs?: number;
  /** Further tries of a unit whose statement timed out on a lock. @defaultValue 10 */
  lockRetries?: number;
  /** The wait before the first retry; it doubles with each. @defaultValue 1000 */
  retryDelayMs?: number;
  /** Told of each lock timeout, before the wait. */
  onLockTimeout?: (unit: string, attempt: number, waitMs: number) => void;
}

/** A migration gave up: a statement could not get its lock in `lockRetries + 1` tries. */
export class MigrationLockTimeoutError extends Error {
  constructor(unit: string, tries: number, lockTimeoutMs: number) {
    super(
      `${unit}: a statement waited more than ${lockTimeoutMs} ms for a lock in each of ${tries} tries; ` +
        'find the long transaction holding the table (pg_stat_activity, pg_locks) and run the migration again',
    );
  }
}

/**
 * Applies what this build's SQL has and the database lacks.
 * @param sources where the SQL files are. @defaultValue the store's own (`STORE_SQL_SOURCES`)
 */
export async function migrate(database: Database, sources: SqlSources = STORE_SQL_SOURCES, options: MigrateOptions = {}): Promise<MigrateResult> {
  const settings = { lockTimeoutMs: options.lockTimeoutMs ?? 5000, lockRetries: options.lockRetries ?? 10, retryDelayMs: options.retryDelayMs ?? 1000 };
  const files = sqlFileNames(sources.migrationsDir);
  // Read (and checked) before any lock is taken.
  const functionFiles = await readFunctionFiles(sources.functionsDir);
  const scripts = await Promise.all(files.map(async (file) => ({ file, script: await readFile(join(sources.migrationsDir, file), 'utf8') })));

  const retrying = <T>(unit: string, work: () => Promise<T>) => withLockRetries(unit, work, settings, options.onLockTimeout);
  const inTransaction = <T>(work: (tx: ChatDb) => Promise<T>) =>
    whenLockFree(() =>
      database.db.transaction(async (tx) => {
        const taken = rowsOf<{ taken: boolean }>(await tx.execute(sql`SELECT pg_try_advisory_xact_lock(${MIGRATION_LOCK_ID}) AS taken`))[0]!.taken;
        if (!taken) throw new LockBusy();
        await tx.execute(sql.raw(`SET LOCAL lock_timeout = ${settings.lockTimeoutMs}`));
        await tx.execute(sql`SET LOCAL statement_timeout = 0`);
        return work(tx as unknown as ChatDb);
      }),
    );

  const done = await retrying('chat_migrations', () =>
    inTransaction(async (tx) => {
      await tx.execute(sql`CREATE TABLE IF NOT EXISTS chat_migrations (
        name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      return appliedNames(tx);
    }),
  );

  const migrations: string[] = [];
  for (const { file, script } of scripts) {
    if (done.has(file)) continue;
    const statements = splitStatements(script);
    const applied = NO_TRANSACTION.test(script.split('\n', 1)[0]!)
      ? await retrying(file, () => whenLockFree(() => database.session((query) => applyOutsideTransaction(query, file, statements, settings.lockTimeoutMs))))
      : await retrying(file, () =>
          inTransaction(async (tx) => {
            if ((await appliedNames(tx)).has(file)) return false;
            for (const statement of statements) await tx.execute(sql.raw(statement));
            await tx.execute(sql`INSERT INTO chat_migrations (name) VALUES (${file})`);
            return true;
          }),
        );
    if (applied) migrations.push(file);
  }

  const functions = await retrying('function files', () => inTransaction((tx) => applyFunctionFiles(tx, functionFiles)));
  return { migrations, functions };
}

/**
 * The runners' lock is only ever tried, never waited for: a runner waiting for it would be a
 * transaction that another runner's `CREATE INDEX CONCURRENTLY` waits to see end, a deadlock. It
 * waits between tries outside any transaction instead.
 */
class LockBusy extends Error {}

async function whenLockFree<T>(work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof LockBusy) && !((err as { cause?: unknown }).cause instanceof LockBusy)) throw err;
      await sleep(50 + Math.random() * 50);
    }
  }
}

async function appliedNames(tx: Pick<ChatDb, 'execute'>): Promise<Set<string>> {
  return new Set(rowsOf<{ name: string }>(await tx.execute(sql`SELECT name FROM chat_migrations`)).map((r) => r.name));
}

/**
 * One session, its lock held at session level. Each statement commits on its own, so a file of this
 * kind must be safe to run again from its start (`IF NOT EXISTS`): a failure or a crash between a
 * statement and the record runs it again. A `CREATE INDEX CONCURRENTLY` that failed leaves an
 * invalid index that `IF NOT EXISTS` would then keep, so invalid indexes fail the run by name.
 */
async function applyOutsideTransaction(query: SessionQuery, file: string, statements: string[], lockTimeoutMs: number): Promise<boolean> {
  const [lock] = await query(`SELECT pg_try_advisory_lock(${MIGRATION_LOCK_ID}) AS taken`);
  if (!lock!.taken) throw new LockBusy();
  try {
    await query(`SET lock_timeout = ${lockTimeoutMs}`);
    await query('SET statement_timeout = 0');
    const recorded = await query(`SELECT 1 FROM chat_migrations WHERE name = '${file.replaceAll("'", "''")}'`);
    if (recorded.length > 0) return false;
    for (const statement of statements) await query(statement);
    const invalid = await query(`SELECT indexrelid::regclass::text AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE NOT i.indisvalid AND c.relnamespace = current_schema()::regnamespace`);
    if (invalid.length > 0) {
      const names = invalid.map((row) => String(row.name)).join(', ');
      throw new Error(`${file}: invalid index ${names} (an interrupted CREATE INDEX CONCURRENTLY); drop it with DROP INDEX CONCURRENTLY and run again`);
    }
    await query(`INSERT INTO chat_migrations (name) VALUES ('${file.replaceAll("'", "''")}')`);
    return true;
  } finally {
    // A broken session ends with its lock; its own error is the one to report.
    await query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`).catch(() => {});
  }
}

async function withLockRetries<T>(
  unit: string,
  work: () => Promise<T>,
  settings: { lockTimeoutMs: number; lockRetries: number; retryDelayMs: number },
  onLockTimeout: MigrateOptions['onLockTimeout'],
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isLockTimeout(err)) throw err;
      if (attempt > settings.lockRetries) throw new MigrationLockTimeoutError(unit, attempt, settings.lockTimeoutMs);
      const waitMs = settings.retryDelayMs * 2 ** (attempt - 1);
      onLockTimeout?.(unit, attempt, waitMs);
      await sleep(waitMs);
    }
  }
}

function isLockTimeout(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return true;
  }
  return false;
}
