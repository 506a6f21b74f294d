/**
 * The PGlite template: a gzipped tarball of a data directory that initdb and every migration of this
 * build made, which an empty data directory starts from (see startPgliteThread) instead of running
 * initdb on first start. It holds the schema only: rows such as the service keys are made by each
 * installation at its own start. Its manifest (`<file>.json`, pglite-template-manifest.ts) names the
 * PGlite that wrote it, the only one that loads it, and the migrations it holds.
 */
import { writeFile } from 'node:fs/promises';
import { pgliteDatabase } from './database.ts';
import { migrate } from './migrate.ts';
import { migrationDigests, type PgliteTemplateManifest } from './pglite-template-manifest.ts';
import { startPgliteThread, type PgliteHandle } from './pglite-thread.ts';

export async function writePgliteTemplate(file: string): Promise<{ migrations: string[]; bytes: number }> {
  const client = await startPgliteThread(undefined);
  try {
    const migrations = await migrate(pgliteDatabase(client));
    await dropTemplateDatabases(client);
    const { pglite, tarball } = await client.dumpDataDir();
    await writeFile(file, tarball);
    const manifest: PgliteTemplateManifest = { pglite, migrations: migrationDigests(migrations) };
    await writeFile(`${file}.json`, `${JSON.stringify(manifest, null, 2)}\n`);
    return { migrations, bytes: tarball.byteLength };
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
