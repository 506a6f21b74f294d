import { expect } from 'chai';
import pg from 'pg';
import { databaseTargetFor, openDatabase, type Database } from './database.ts';
import type { DatabasePooler } from '@chat/service-config';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PROBE = { name: 'chat_pooler_mode_probe', text: 'SELECT $1::int AS v' };

/**
 * What a process leaves in its PostgreSQL sessions, by `DATABASE_POOLER`. One connection per pool,
 * so every statement runs in the session the checks look at. The service behind a real PgBouncer
 * is tests/rest/pgbouncer.test.ts.
 */
describe('database sessions by DATABASE_POOLER', () => {
  let serverDefault: string;
  const opened: Database[] = [];
  const open = async (pooler: DatabasePooler) => {
    const target = databaseTargetFor({ databaseUrl: DATABASE_URL, dataDir: 'unused', poolSize: 1, pooler });
    const database = await openDatabase(target);
    opened.push(database);
    return database;
  };
  const preparedIn = async (database: Database) =>
    (await database.sql.query<{ name: string }>({ text: 'SELECT name FROM pg_prepared_statements' }, [])).map((r) => r.name);
  const timeoutIn = async (database: Database) => (await database.sql.query<{ statement_timeout: string }>({ text: 'SHOW statement_timeout' }, []))[0]!.statement_timeout;

  before(async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    serverDefault = (await client.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]!.statement_timeout;
    await client.end();
  });
  after(async () => {
    await Promise.all(opened.map((d) => d.close()));
  });

  it('`none` (the default): named statements stay prepared in the session, and the statement timeout is set at connect', async () => {
    const database = await open('none');
    expect(await database.sql.query(PROBE, [7])).to.deep.equal([{ v: 7 }]);
    expect(await preparedIn(database)).to.include(PROBE.name);
    expect(await timeoutIn(database)).to.equal('10s');
  });

  it('`transaction`: every statement runs unnamed and no setting is sent at connect, so the session holds nothing of the process', async () => {
    expect(serverDefault, 'the test server sets the same timeout itself: nothing to tell apart').to.not.equal('10s');
    const database = await open('transaction');
    expect(await database.sql.query(PROBE, [7])).to.deep.equal([{ v: 7 }]);
    await database.sql.transaction(async (tx) => expect(await tx.query(PROBE, [8])).to.deep.equal([{ v: 8 }]));
    expect(await preparedIn(database)).to.deep.equal([]);
    expect(await timeoutIn(database)).to.equal(serverDefault);
  });

  it('the target carries the setting from the configuration', () => {
    expect(databaseTargetFor({ databaseUrl: DATABASE_URL, dataDir: 'x', pooler: 'transaction' })).to.deep.include({ kind: 'postgres', pooler: 'transaction' });
    expect(databaseTargetFor({ databaseUrl: DATABASE_URL, dataDir: 'x' })).to.not.have.property('pooler');
  });
});
