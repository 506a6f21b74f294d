import { expect } from 'chai';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureTestSchema, TEST_DATABASE_URL } from '../test/targets.ts';
import { openDatabase, type Database } from './database.ts';

const BACKEND_PID = { name: 'chat_test_backend_pid', text: 'SELECT pg_backend_pid() AS pid' };

/**
 * The hand-written statements run on clients kept out of the pool between statements: they must
 * behave as `pool.query` does when a connection breaks or a statement fails, and leave the pool
 * to everything else.
 */
describe('held clients of the hand-written statements, on postgres', function () {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  let database: Database;
  const backendPid = async () => (await database.sql.query<{ pid: number }>(BACKEND_PID, []))[0]!.pid;

  before(async () => {
    await ensureTestSchema();
    await admin.connect();
  });
  after(async () => admin.end());
  beforeEach(async () => {
    database = await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 4 });
  });
  afterEach(async () => database.close());

  it('runs one statement after another on the same connection', async () => {
    const first = await backendPid();
    expect(await backendPid()).to.equal(first);
  });

  it('replaces a connection that ended while held: the next statement runs on a new one', async () => {
    const first = await backendPid();
    await admin.query('SELECT pg_terminate_backend($1)', [first]);
    // The termination reaches the client as an event of its socket.
    await sleep(200);
    const next = await backendPid();
    expect(next).to.not.equal(first);
  });

  it('closes the connection of a failed statement, as pool.query does', async () => {
    const first = await backendPid();
    let failure: unknown;
    await database.sql.query({ text: 'SELECT 1 / 0' }, []).catch((err: unknown) => (failure = err));
    expect((failure as { code?: string }).code).to.equal('22012');
    expect(await backendPid()).to.not.equal(first);
  });

  it('leaves the rest of the pool to transactions and drizzle while it holds a client', async () => {
    await Promise.all(Array.from({ length: 4 }, () => database.sql.query({ text: 'SELECT pg_sleep(0.05)' }, [])));
    // One client is held now; the other three serve three transactions at once.
    const pids = await Promise.all(
      Array.from({ length: 3 }, () => database.sql.transaction(async (tx) => (await tx.query<{ pid: number }>(BACKEND_PID, []))[0]!.pid)),
    );
    expect(new Set(pids).size).to.equal(3);
    expect(pids).to.not.include(await backendPid());
  });

  it('hands its clients back on close, so the pool ends', async () => {
    await Promise.all(Array.from({ length: 3 }, () => backendPid()));
    const closed = await Promise.race([database.close().then(() => true), sleep(2000).then(() => false)]);
    expect(closed).to.equal(true);
    database = await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 4 });
  });
});
