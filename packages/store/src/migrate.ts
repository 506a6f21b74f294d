/**
 * Applies the SQL files in `../migrations` in name order, each once. Several instances may start at
 * once: a transaction-scoped advisory lock makes them take turns, and the loser sees the winner's
 * bookkeeping row and skips the file.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
/** Arbitrary constant shared by every instance of this service. */
const MIGRATION_LOCK_ID = 7_216_530_113;

export async function migrate(database: Database): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  const applied: string[] = [];
  await database.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`);
    await tx.execute(sql`CREATE TABLE IF NOT EXISTS chat_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = await tx.execute<{ name: string }>(sql`SELECT name FROM chat_migrations`);
    const doneNames = new Set(rowsOf<{ name: string }>(done).map((r) => r.name));
    for (const file of files) {
      if (doneNames.has(file)) continue;
      const script = await readFile(MIGRATIONS_DIR + file, 'utf8');
      // One statement per call: PGlite's extended protocol takes a single statement at a time.
      for (const statement of splitStatements(script)) await tx.execute(sql.raw(statement));
      await tx.execute(sql`INSERT INTO chat_migrations (name) VALUES (${file})`);
      applied.push(file);
    }
  });
  return applied;
}

/** node-postgres returns `{ rows }`, PGlite returns `{ rows }` too; both shapes are read here. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/**
 * Splits a migration script at semicolons that end a line, outside dollar-quoted bodies (functions):
 * migrations keep to that layout.
 */
export function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inBody = false;
  for (const line of script.split('\n')) {
    if (!inBody && /^\s*--/.test(line)) continue;
    current.push(line);
    // Each `$$` opens or closes a body.
    if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) inBody = !inBody;
    if (!inBody && /;\s*$/.test(line)) {
      statements.push(current.join('\n').replace(/;\s*$/, '').trim());
      current = [];
    }
  }
  statements.push(current.join('\n').trim());
  return statements.filter((s) => s.length > 0);
}
