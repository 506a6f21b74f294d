import { expect } from 'chai';
import { sql } from 'drizzle-orm';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHANGED_FUNCTION, changeBody, copyFunctionFiles, databaseBodies, fileBodies, FUNCTION_NAMES, recordedFunctions, type FunctionFilesCopy } from '../test/function-files.ts';
import { freshTargets, type FreshDatabase } from '../test/targets.ts';
import type { Database } from './database.ts';
import { migrate, type MigrateResult } from './migrate.ts';
import { rowsOf } from './sql-script.ts';
import { sqlFileChecksums, sqlFileNames, STORE_SQL_SOURCES } from './sql-sources.ts';
import { rejection } from '../test/rejection.ts';

const MIGRATION_FILES = sqlFileNames(STORE_SQL_SOURCES.migrationsDir);
const EVERYTHING: MigrateResult = { migrations: MIGRATION_FILES, functions: FUNCTION_NAMES };
const NOTHING: MigrateResult = { migrations: [], functions: [] };

async function tableExists(database: Database, name: string): Promise<boolean> {
  return rowsOf<{ t: string | null }>(await database.db.execute(sql`SELECT to_regclass(${name})::text AS t`))[0]!.t !== null;
}

/** Every function of the store runs the body of its file, and `chat_functions` holds each file's checksum. */
async function expectFunctionsOfFiles(database: Database, dir = STORE_SQL_SOURCES.functionsDir): Promise<void> {
  const running = await databaseBodies(database);
  for (const [name, body] of await fileBodies(dir)) expect(running.get(name), name).to.equal(body);
  const recorded = new Map([...(await recordedFunctions(database))].map(([name, [checksum]]) => [`${name}.sql`, checksum]));
  expect(Object.fromEntries(recorded)).to.deep.equal(sqlFileChecksums(dir, sqlFileNames(dir)));
}

for (const target of freshTargets) {
  describe(`migrate on ${target.name}: schema migrations, then function files`, function () {
    this.timeout(120_000);
    let fresh: FreshDatabase;
    let copy: FunctionFilesCopy;
    let database: Database;

    beforeEach(async () => {
      fresh = await target.open();
      database = fresh.database;
      copy = await copyFunctionFiles();
    });
    afterEach(async () => {
      await fresh.cleanup();
      await copy.remove();
    });

    it('gives a fresh database every migration and every function, each with the body of its file', async () => {
      expect(await migrate(database)).to.deep.equal(EVERYTHING);
      // chat_append_messages_v1 and _v2 have other bodies in the migrations that first defined them.
      await expectFunctionsOfFiles(database);
      expect(await migrate(database)).to.deep.equal(NOTHING);
    });

    it('applies a changed function file on the next run, once, and leaves the unchanged ones alone', async () => {
      await migrate(database, copy.sources);
      const before = await recordedFunctions(database);
      await copy.edit(CHANGED_FUNCTION, changeBody);
      expect(await migrate(database, copy.sources)).to.deep.equal({ migrations: [], functions: [CHANGED_FUNCTION] });
      expect((await databaseBodies(database)).get(CHANGED_FUNCTION)).to.include('WHERE true');
      await expectFunctionsOfFiles(database, copy.sources.functionsDir);
      const after = await recordedFunctions(database);
      for (const name of FUNCTION_NAMES.filter((n) => n !== CHANGED_FUNCTION)) expect(after.get(name), name).to.deep.equal(before.get(name));
      expect(await migrate(database, copy.sources)).to.deep.equal(NOTHING);
      const swept = await database.db.execute(sql.raw(`SELECT ${CHANGED_FUNCTION}(0, 10)::int AS n`));
      expect(rowsOf<{ n: number }>(swept)).to.deep.equal([{ n: 0 }]);
    });

    it('upgrades a database that the runner before function files migrated (0001..0008, no chat_functions)', async () => {
      const noFunctions = await mkdtemp(join(tmpdir(), 'chat-no-functions-'));
      try {
        expect(await migrate(database, { ...STORE_SQL_SOURCES, functionsDir: noFunctions })).to.deep.equal({ migrations: MIGRATION_FILES, functions: [] });
      } finally {
        await rm(noFunctions, { recursive: true, force: true });
      }
      await database.db.execute(sql`DROP TABLE chat_functions`);
      const v1 = (await fileBodies(STORE_SQL_SOURCES.functionsDir)).get('chat_append_messages_v1');
      expect((await databaseBodies(database)).get('chat_append_messages_v1'), 'the body 0003 defined').to.not.equal(v1);
      expect(await migrate(database)).to.deep.equal({ migrations: [], functions: FUNCTION_NAMES });
      await expectFunctionsOfFiles(database);
    });

    it('applies files that call functions of files after them', async () => {
      await writeFile(join(copy.sources.functionsDir, 'chat_test_a_caller.sql'), 'CREATE OR REPLACE FUNCTION chat_test_a_caller() RETURNS integer\nLANGUAGE sql AS $$ SELECT chat_test_z_callee() + 1 $$;\n');
      await writeFile(join(copy.sources.functionsDir, 'chat_test_z_callee.sql'), 'CREATE OR REPLACE FUNCTION chat_test_z_callee() RETURNS integer\nLANGUAGE sql AS $$ SELECT 41 $$;\n');
      expect((await migrate(database, copy.sources)).functions).to.include.members(['chat_test_a_caller', 'chat_test_z_callee']);
      expect(rowsOf(await database.db.execute(sql`SELECT chat_test_a_caller() AS n`))).to.deep.equal([{ n: 42 }]);
    });

    it('fails on a broken function body, naming its file, and keeps none of the function files of that run', async () => {
      await writeFile(join(copy.sources.functionsDir, 'chat_test_broken.sql'), 'CREATE OR REPLACE FUNCTION chat_test_broken() RETURNS bigint\nLANGUAGE sql AS $$ SELECT count(*) FROM chat_no_such_table $$;\n');
      const err = await rejection(migrate(database, copy.sources));
      expect(err.message).to.equal('function file chat_test_broken.sql: relation "chat_no_such_table" does not exist');
      // Each migration committed on its own; the function files are one unit, rolled back whole.
      expect(await tableExists(database, 'messages'), 'the migrations of that run').to.equal(true);
      const recorded = (await tableExists(database, 'chat_functions')) ? rowsOf(await database.db.execute(sql`SELECT name FROM chat_functions`)) : [];
      expect(recorded, 'the function files of that run').to.deep.equal([]);
    });

    it('fails on a function whose result changed, which needs a new name instead', async () => {
      await migrate(database, copy.sources);
      await copy.edit(CHANGED_FUNCTION, (text) => changeBody(text).replace('RETURNS bigint', 'RETURNS integer').replace('count(*)', 'count(*)::integer'));
      const err = await rejection(migrate(database, copy.sources));
      expect(err.message).to.equal(`function file ${CHANGED_FUNCTION}.sql: cannot change return type of existing function`);
    });

    it('refuses, before it starts, a function file that is not one CREATE OR REPLACE FUNCTION of its name', async () => {
      for (const [file, text] of [
        ['chat_test_table.sql', 'CREATE TABLE chat_test_table (id integer);\n'],
        ['chat_test_plain.sql', 'CREATE FUNCTION chat_test_plain() RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;\n'],
        ['chat_test_named.sql', 'CREATE OR REPLACE FUNCTION chat_test_other() RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;\n'],
        ['chat_test_two.sql', 'CREATE OR REPLACE FUNCTION chat_test_two() RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;\nSELECT 1;\n'],
      ]) {
        const dir = await mkdtemp(join(tmpdir(), 'chat-bad-function-'));
        try {
          await writeFile(join(dir, file!), text!);
          const err = await rejection(migrate(database, { ...STORE_SQL_SOURCES, functionsDir: dir }));
          const name = file!.slice(0, -'.sql'.length);
          expect(err.message, file).to.equal(`function file ${file} must hold one statement, CREATE OR REPLACE FUNCTION ${name}(...)`);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
      expect(await tableExists(database, 'messages')).to.equal(false);
    });

    if (target.name === 'postgres') {
      it('lets instances that start at once take turns: each migration and function file is applied by one of them', async () => {
        const other = await fresh.openAnother!();
        // Each unit takes the lock on its own, so the runners may share the work out in any way;
        // together they apply every file once.
        const together = (results: MigrateResult[]) => ({
          migrations: results.flatMap((r) => r.migrations).sort(),
          functions: results.flatMap((r) => r.functions).sort(),
        });
        const sorted = (result: MigrateResult) => ({ migrations: [...result.migrations].sort(), functions: [...result.functions].sort() });
        expect(together(await Promise.all([migrate(database, copy.sources), migrate(other, copy.sources)]))).to.deep.equal(sorted(EVERYTHING));
        await copy.edit(CHANGED_FUNCTION, changeBody);
        expect(together(await Promise.all([migrate(database, copy.sources), migrate(other, copy.sources)]))).to.deep.equal({ migrations: [], functions: [CHANGED_FUNCTION] });
        await expectFunctionsOfFiles(database, copy.sources.functionsDir);
      });
    }
  });
}
