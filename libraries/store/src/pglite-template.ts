/**
 * The PGlite template: a gzipped tarball of a data directory that initdb, every migration and every
 * function file of this build made, which an empty data directory starts from (see
 * startPgliteThread) instead of running initdb on first start. It holds the schema only: rows such as the service keys are made by each
 * installation at its own start. Its manifest (`<file>.json`, pglite-template-manifest.ts) names the
 * PGlite that wrote it, the only one that loads it, and the migration and function files it holds.
 */
import { writeFile } from 'node:fs/promises';
import { pgliteDatabase } from './database.ts';
import { migrate, type MigrateResult } from './migrate.ts';
import type { PgliteTemplateManifest } from './pglite-template-manifest.ts';
import { startPgliteThread, type PgliteHandle } from './pglite-thread.ts';
import { sqlFileChecksums, STORE_SQL_SOURCES, type SqlSources } from './sql-sources.ts';

/**
 * Writes the template and its manifest to `file` and `<file>.json`.
 * @param sources the SQL it is made from. @defaultValue the store's own
 */
export async function writePgliteTemplate(file: string, sources: SqlSources = STORE_SQL_SOURCES): Promise<MigrateResult & { bytes: number }> {
  const client = await startPgliteThread(undefined);
  try {
    const applied = await migrate(pgliteDatabase(client), sources);
    await dropTemplateDatabases(client);
    const { pglite, tarball } = await client.dumpDataDir();
    await writeFile(file, tarball);
    const manifest: PgliteTemplateManifest = {
      pglite,
      migrations: sqlFileChecksums(sources.migrationsDir, applied.migrations),
      functions: sqlFileChecksums(sources.functionsDir, applied.functions.map((name) => `${name}.sql`)),
    };
    await writeFile(`${file}.json`, `${JSON.stringify(manifest, null, 2)}\n`);
    return { ...applied, bytes: tarball.byteLength };
  } finally {
    await client.close();
  }
}

/**
 * The store lives in the one database PGlite opens (`postgres`). The cluster's template0 and
 * template1 serve only CREATE DATABASE, which nothing runs on the embedded database, and are ~600 of
 * the ~1,000 files a first start creates (each file created is ~0.75 ms of the kernel's time here).
 */
async function dropTemplateDatabases(client: PgliteHandle): Promise<void> {
  await client.exec("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')");
  await client.exec('DROP DATABASE template0');
  await client.exec('DROP DATABASE template1');
}
