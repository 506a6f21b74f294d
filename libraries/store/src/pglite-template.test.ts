import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgliteDatabase } from './database.ts';
import { migrate } from './migrate.ts';
import { writePgliteTemplate } from './pglite-template.ts';
import type { PgliteTemplateManifest } from './pglite-template-manifest.ts';
import { PGLITE_TEMPLATE_FILE, startPgliteThread, type PgliteHandle } from './pglite-thread.ts';
import { sqlFileChecksums, sqlFileNames, STORE_SQL_SOURCES } from './sql-sources.ts';
import { CHANGED_FUNCTION, changeBody, copyFunctionFiles } from '../test/function-files.ts';

const { migrationsDir, functionsDir } = STORE_SQL_SOURCES;

async function appliedMigrations(db: PgliteHandle): Promise<string[]> {
  return (await db.query<{ name: string }>('SELECT name FROM chat_migrations ORDER BY name')).rows.map((r) => r.name);
}

describe('PGlite template: an empty data directory starts from a tarball the build made', () => {
  let work: string;
  let template: string;

  before(async function () {
    this.timeout(120_000);
    work = await mkdtemp(join(tmpdir(), 'chat-pglite-template-'));
    template = join(work, 'template.tar.gz');
    await writePgliteTemplate(template);
  });

  after(() => rm(work, { recursive: true, force: true }));

  it('the build wrote the template and its manifest beside the store', () => {
    expect(existsSync(PGLITE_TEMPLATE_FILE), PGLITE_TEMPLATE_FILE).to.equal(true);
    expect(existsSync(`${PGLITE_TEMPLATE_FILE}.json`)).to.equal(true);
  });

  it('starts a directory without a database from the template: every migration applied, no service key, within PGlite opened memory', async () => {
    const dataDir = join(work, 'from-template');
    await mkdir(join(dataDir, 'lost+found'), { recursive: true });
    const rssBefore = process.memoryUsage().rss;
    const db = await startPgliteThread(dataDir, { template, onTemplateUnusable: (err) => expect.fail(`template unusable: ${err.message}`) });
    try {
      expect(db.origin).to.equal('template');
      expect(await appliedMigrations(db)).to.deep.equal(sqlFileNames(migrationsDir));
      const functions = (await db.query<{ name: string; checksum: string }>('SELECT name, checksum FROM chat_functions ORDER BY name')).rows;
      const manifest = JSON.parse(await readFile(`${template}.json`, 'utf8')) as PgliteTemplateManifest;
      expect(Object.fromEntries(functions.map((r) => [`${r.name}.sql`, r.checksum]))).to.deep.equal(manifest.functions);
      expect(manifest.functions).to.deep.equal(sqlFileChecksums(functionsDir, sqlFileNames(functionsDir)));
      expect(await migrate(pgliteDatabase(db))).to.deep.equal({ migrations: [], functions: [] });
      expect((await db.query('SELECT * FROM service_keys')).rows).to.deep.equal([]);
      expect((await db.query('SELECT datname FROM pg_database')).rows).to.deep.equal([{ datname: 'postgres' }]);
      // initdb grows PGlite's memory to ~800 MB; a loaded template stays near an opened database's ~300 MB.
      const grownMiB = (process.memoryUsage().rss - rssBefore) / 1048576;
      expect(grownMiB, 'RSS growth in MiB').to.be.below(500);
      await db.query("INSERT INTO service_keys (name, secret) VALUES ('k', 's')");
    } finally {
      await db.close();
    }
    const reopened = await startPgliteThread(dataDir, { template });
    expect(reopened.origin).to.equal('opened');
    expect((await reopened.query('SELECT name FROM service_keys')).rows).to.deep.equal([{ name: 'k' }]);
    await reopened.close();
  });

  it('runs initdb, and says why, when the template is missing', async () => {
    const dataDir = join(work, 'no-template');
    const reasons: Error[] = [];
    const db = await startPgliteThread(dataDir, { template: join(work, 'absent.tar.gz'), onTemplateUnusable: (err) => reasons.push(err) });
    try {
      expect(db.origin).to.equal('initdb');
      expect(reasons.map((e) => e.message)).to.deep.equal([`there is no PGlite template at ${join(work, 'absent.tar.gz')}`]);
      expect((await db.query("SELECT to_regclass('chat_migrations') AS t")).rows).to.deep.equal([{ t: null }]);
      expect((await migrate(pgliteDatabase(db))).migrations).to.have.length.above(0);
    } finally {
      await db.close();
    }
  });

  it('runs initdb in a clean directory when the template does not load', async () => {
    const broken = join(work, 'broken.tar.gz');
    const bytes = await readFile(template);
    await writeFile(broken, bytes.subarray(0, bytes.length >> 1));
    await writeFile(`${broken}.json`, await readFile(`${template}.json`));
    const dataDir = join(work, 'broken-template');
    // A volume's own folder, which neither the failed load nor initdb may touch.
    await mkdir(join(dataDir, 'lost+found'), { recursive: true });
    await writeFile(join(dataDir, 'lost+found', 'kept'), 'kept');
    const reasons: Error[] = [];
    const db = await startPgliteThread(dataDir, { template: broken, onTemplateUnusable: (err) => reasons.push(err) });
    try {
      expect(reasons).to.have.length(1);
      expect(db.origin).to.equal('initdb');
      expect((await db.query<{ n: number }>('SELECT 1 AS n')).rows).to.deep.equal([{ n: 1 }]);
      expect(await readFile(join(dataDir, 'lost+found', 'kept'), 'utf8')).to.equal('kept');
    } finally {
      await db.close();
    }
  });

  it('refuses a template written by another PGlite version', async () => {
    const other = join(work, 'other-version.tar.gz');
    await writeFile(other, await readFile(template));
    const manifest = JSON.parse(await readFile(`${template}.json`, 'utf8')) as { pglite: string };
    await writeFile(`${other}.json`, JSON.stringify({ ...manifest, pglite: '0.0.1' }));
    const reasons: Error[] = [];
    const db = await startPgliteThread(join(work, 'other-version'), { template: other, onTemplateUnusable: (err) => reasons.push(err) });
    await db.close();
    expect(db.origin).to.equal('initdb');
    expect(reasons).to.have.length(1);
    expect(reasons[0]!.message).to.include(`the PGlite template was built with PGlite 0.0.1, this is ${manifest.pglite}`);
  });

  it('refuses a template whose migrations read differently from the migration files', async () => {
    const stale = join(work, 'stale-migration.tar.gz');
    await writeFile(stale, await readFile(template));
    const manifest = JSON.parse(await readFile(`${template}.json`, 'utf8')) as { migrations: Record<string, string> };
    await writeFile(`${stale}.json`, JSON.stringify({ ...manifest, migrations: { ...manifest.migrations, '0002_inbox.sql': 'an older text' } }));
    const reasons: Error[] = [];
    const db = await startPgliteThread(join(work, 'stale-migration'), { template: stale, onTemplateUnusable: (err) => reasons.push(err) });
    await db.close();
    expect(db.origin).to.equal('initdb');
    expect(reasons.map((e) => e.message)).to.deep.equal(["the PGlite template holds migrations that differ from this build's: 0002_inbox.sql"]);
  });

  it('a template made before a function file changed: its manifest says so, and the first migrate applies the file', async function () {
    this.timeout(120_000);
    const copy = await copyFunctionFiles();
    try {
      await copy.edit(CHANGED_FUNCTION, changeBody);
      const older = join(work, 'older-function.tar.gz');
      await writePgliteTemplate(older, copy.sources);
      const manifest = JSON.parse(await readFile(`${older}.json`, 'utf8')) as PgliteTemplateManifest;
      const current = JSON.parse(await readFile(`${template}.json`, 'utf8')) as PgliteTemplateManifest;
      const differing = Object.keys(current.functions).filter((name) => manifest.functions[name] !== current.functions[name]);
      expect(differing).to.deep.equal([`${CHANGED_FUNCTION}.sql`]);
      expect(manifest.migrations).to.deep.equal(current.migrations);
      const db = await startPgliteThread(join(work, 'older-function'), { template: older, onTemplateUnusable: (err) => expect.fail(`template unusable: ${err.message}`) });
      try {
        expect(db.origin).to.equal('template');
        expect(await migrate(pgliteDatabase(db))).to.deep.equal({ migrations: [], functions: [CHANGED_FUNCTION] });
        expect(await migrate(pgliteDatabase(db))).to.deep.equal({ migrations: [], functions: [] });
      } finally {
        await db.close();
      }
    } finally {
      await copy.remove();
    }
  });
});
