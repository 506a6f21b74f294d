import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../src/database.ts';
import { rowsOf } from '../src/sql-script.ts';
import { sqlFileNames, STORE_SQL_SOURCES, type SqlSources } from '../src/sql-sources.ts';
import { sql } from 'drizzle-orm';

/** The store's function names, from its function files. */
export const FUNCTION_NAMES = sqlFileNames(STORE_SQL_SOURCES.functionsDir).map((file) => file.slice(0, -'.sql'.length));

/** The function whose file the tests change, and a change of its body that keeps what it does. */
export const CHANGED_FUNCTION = 'chat_sweep_append_rate_windows';
export function changeBody(text: string): string {
  if (!text.includes('SELECT count(*) FROM swept')) throw new Error(`${CHANGED_FUNCTION}.sql no longer reads as the tests expect`);
  return text.replace('SELECT count(*) FROM swept', 'SELECT count(*) FROM swept WHERE true');
}

/** A copy of the store's function files in a temp folder, to change without touching the store's. */
export interface FunctionFilesCopy {
  sources: SqlSources;
  /** Rewrites `<name>.sql`, `edit` taking its text. */
  edit(name: string, edit: (text: string) => string): Promise<void>;
  remove(): Promise<void>;
}

export async function copyFunctionFiles(): Promise<FunctionFilesCopy> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-functions-'));
  await cp(STORE_SQL_SOURCES.functionsDir, dir, { recursive: true });
  return {
    sources: { ...STORE_SQL_SOURCES, functionsDir: dir },
    async edit(name, edit) {
      const file = join(dir, `${name}.sql`);
      await writeFile(file, edit(await readFile(file, 'utf8')));
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The bodies (between the `$$`) of the function files of `dir`, by function name. */
export async function fileBodies(dir: string): Promise<Map<string, string>> {
  const bodies = new Map<string, string>();
  for (const file of sqlFileNames(dir)) {
    const text = await readFile(join(dir, file), 'utf8');
    bodies.set(file.slice(0, -'.sql'.length), text.slice(text.indexOf('$$') + 2, text.lastIndexOf('$$')));
  }
  return bodies;
}

/** The bodies the database runs, by function name, of the functions in the schema it creates things in. */
export async function databaseBodies(database: Database): Promise<Map<string, string>> {
  const result = await database.db.execute(sql`SELECT proname, prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace`);
  return new Map(rowsOf<{ proname: string; prosrc: string }>(result).map((r) => [r.proname, r.prosrc]));
}

/** `chat_functions`: function name → [checksum, applied_at]. */
export async function recordedFunctions(database: Database): Promise<Map<string, [string, string]>> {
  const result = await database.db.execute(sql`SELECT name, checksum, applied_at::text AS applied_at FROM chat_functions`);
  return new Map(rowsOf<{ name: string; checksum: string; applied_at: string }>(result).map((r) => [r.name, [r.checksum, r.applied_at]]));
}
