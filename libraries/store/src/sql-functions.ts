/**
 * The function files (`sql/functions/<name>.sql`): each holds one `CREATE OR REPLACE FUNCTION <name>`,
 * the current definition of that function, the way Flyway's repeatable migrations or bullmq's Lua
 * scripts are kept. The runner applies a file when the checksum of its text differs from the one
 * recorded for its name in `chat_functions` (never applied, or changed since), after the schema
 * migrations, in their transaction and under their lock. Nothing here drops a function: a function
 * no release calls any more is dropped by a schema migration (the rule is in
 * docs/operations.md, "Deploying").
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { sqlChecksum, sqlFileNames } from './sql-sources.ts';
import { rowsOf, splitStatements } from './sql-script.ts';

export interface FunctionFile {
  /** The function's name, which is the file's name without `.sql`. */
  name: string;
  statement: string;
  /** SHA-256 of the file's text. */
  checksum: string;
}

/** Reads and checks the function files of `dir`: one `CREATE OR REPLACE FUNCTION` of its own name each. */
export async function readFunctionFiles(dir: string): Promise<FunctionFile[]> {
  return Promise.all(
    sqlFileNames(dir).map(async (file) => {
      const text = await readFile(join(dir, file), 'utf8');
      const name = file.slice(0, -'.sql'.length);
      const statements = splitStatements(text);
      const defines = statements.length === 1 ? /^CREATE\s+OR\s+REPLACE\s+FUNCTION\s+([a-z0-9_]+)\s*\(/i.exec(statements[0]!)?.[1] : undefined;
      // OR REPLACE is what makes a file safe to apply again; anything else belongs in a migration.
      if (defines !== name) throw new Error(`function file ${file} must hold one statement, CREATE OR REPLACE FUNCTION ${name}(...)`);
      return { name, statement: statements[0]!, checksum: sqlChecksum(text) };
    }),
  );
}

/**
 * Applies the files whose text differs from what `chat_functions` records, and records it; returns
 * their names. `tx` is the migration transaction, which holds the migration lock.
 */
export async function applyFunctionFiles(tx: Pick<ChatDb, 'execute'>, files: FunctionFile[]): Promise<string[]> {
  await tx.execute(sql`CREATE TABLE IF NOT EXISTS chat_functions (
    name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const recorded = new Map(
    rowsOf<{ name: string; checksum: string }>(await tx.execute(sql`SELECT name, checksum FROM chat_functions`)).map((r) => [r.name, r.checksum]),
  );
  const changed = files.filter((file) => recorded.get(file.name) !== file.checksum);
  if (changed.length === 0) return [];
  // First unchecked, as pg_dump restores functions, so a file may call a function of a file after
  // it; then checked, now that all exist, so a broken body fails the migration rather than a call.
  await tx.execute(sql`SET LOCAL check_function_bodies = off`);
  for (const file of changed) await createFunction(tx, file);
  await tx.execute(sql`SET LOCAL check_function_bodies = on`);
  for (const file of changed) {
    await createFunction(tx, file);
    await tx.execute(sql`INSERT INTO chat_functions (name, checksum) VALUES (${file.name}, ${file.checksum})
      ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()`);
  }
  return changed.map((file) => file.name);
}

async function createFunction(tx: Pick<ChatDb, 'execute'>, file: FunctionFile): Promise<void> {
  try {
    await tx.execute(sql.raw(file.statement));
  } catch (err) {
    // drizzle's error quotes the whole statement; the database's own message is the one to read.
    const cause = (err as { cause?: unknown }).cause ?? err;
    throw new Error(`function file ${file.name}.sql: ${(cause as Error).message}`, { cause: err });
  }
}
