/**
 * Brings a database to this build's schema and SQL functions. Several instances may start at once:
 * a transaction-scoped advisory lock makes them take turns, and the loser finds the winner's
 * bookkeeping and has nothing left to do. In one transaction:
 * 1. the schema migrations (`migrations/`), in name order, each once, recorded by name in
 *    `chat_migrations`;
 * 2. then the function files (`sql/functions/`, sql-functions.ts), each whose text differs from the
 *    one recorded in `chat_functions`. They come last, so a function's file, not a migration that
 *    once defined it, holds the body a database runs.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { Database } from './database.ts';
import { applyFunctionFiles, readFunctionFiles } from './sql-functions.ts';
import { rowsOf, splitStatements } from './sql-script.ts';
import { sqlFileNames, STORE_SQL_SOURCES, type SqlSources } from './sql-sources.ts';

/** Arbitrary constant shared by every instance of this service. */
const MIGRATION_LOCK_ID = 7_216_530_113;

export interface MigrateResult {
  /** Migration files applied by this call, in order. */
  migrations: string[];
  /** Functions (by file name without `.sql`) created or replaced by this call. */
  functions: string[];
}

/**
 * Applies what this build's SQL has and the database lacks.
 * @param sources where the SQL files are. @defaultValue the store's own (`STORE_SQL_SOURCES`)
 */
export async function migrate(database: Database, sources: SqlSources = STORE_SQL_SOURCES): Promise<MigrateResult> {
  const files = sqlFileNames(sources.migrationsDir);
  // Read (and checked) before the lock is taken.
  const functionFiles = await readFunctionFiles(sources.functionsDir);
  return database.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`);
    await tx.execute(sql`CREATE TABLE IF NOT EXISTS chat_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = await tx.execute<{ name: string }>(sql`SELECT name FROM chat_migrations`);
    const doneNames = new Set(rowsOf<{ name: string }>(done).map((r) => r.name));
    const migrations: string[] = [];
    for (const file of files) {
      if (doneNames.has(file)) continue;
      const script = await readFile(join(sources.migrationsDir, file), 'utf8');
      for (const statement of splitStatements(script)) await tx.execute(sql.raw(statement));
      await tx.execute(sql`INSERT INTO chat_migrations (name) VALUES (${file})`);
      migrations.push(file);
    }
    return { migrations, functions: await applyFunctionFiles(tx, functionFiles) };
  });
}
