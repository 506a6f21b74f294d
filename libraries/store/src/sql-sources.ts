/**
 * Where the store's SQL lives, beside the package: `migrations/`, the versioned schema changes, each
 * applied once in name order, and `sql/functions/`, the current definition of every SQL function, one
 * file each, applied whenever its text changes (migrate.ts). Tests and the PGlite template's build
 * pass other folders to try changed files without touching these.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SqlSources {
  /** Folder of the versioned schema migrations (`NNNN_what.sql`). */
  migrationsDir: string;
  /** Folder of the function files (`<function name>.sql`). */
  functionsDir: string;
}

/** The store's own SQL, found beside the module in the sources and in dist/ alike. */
export const STORE_SQL_SOURCES: SqlSources = {
  migrationsDir: fileURLToPath(new URL('../migrations/', import.meta.url)),
  functionsDir: fileURLToPath(new URL('../sql/functions/', import.meta.url)),
};

/** The `.sql` files of a folder, in name order. */
export function sqlFileNames(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.sql')).sort();
}

/** SHA-256 of a file's text, hex: the checksum the runner records and the template manifest holds. */
export function sqlChecksum(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** File name → checksum, for the named files of `dir`. */
export function sqlFileChecksums(dir: string, names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, sqlChecksum(readFileSync(join(dir, name)))]));
}
