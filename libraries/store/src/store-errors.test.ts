import { expect } from 'chai';
import pg from 'pg';
import { AppError } from '@chat/contracts';
import { ensureTestSchema, TEST_DATABASE_URL } from '../test/targets.ts';
import { storeCall } from './store-errors.ts';

describe('storeCall on PostgreSQL', function () {
  let a: pg.Client;
  let b: pg.Client;

  before(async () => {
    await ensureTestSchema();
    [a, b] = [new pg.Client({ connectionString: TEST_DATABASE_URL }), new pg.Client({ connectionString: TEST_DATABASE_URL })];
    await Promise.all([a.connect(), b.connect()]);
    await a.query('CREATE TABLE IF NOT EXISTS store_call_deadlock (id int PRIMARY KEY)');
    await a.query('INSERT INTO store_call_deadlock VALUES (1), (2) ON CONFLICT DO NOTHING');
  });
  after(async () => {
    await Promise.all([a?.end(), b?.end()]);
  });

  it('answers a transaction the database rolled back as a deadlock victim with STORE_UNAVAILABLE (a 503 the client retries), not as a bug', async () => {
    await a.query('BEGIN');
    await b.query('BEGIN');
    await a.query('SELECT * FROM store_call_deadlock WHERE id = 1 FOR UPDATE');
    await b.query('SELECT * FROM store_call_deadlock WHERE id = 2 FOR UPDATE');
    // Each waits for the row the other holds: PostgreSQL rolls one of them back.
    const outcomes = await Promise.allSettled([
      storeCall(() => a.query('SELECT * FROM store_call_deadlock WHERE id = 2 FOR UPDATE')),
      storeCall(() => b.query('SELECT * FROM store_call_deadlock WHERE id = 1 FOR UPDATE')),
    ]);
    await Promise.all([a.query('ROLLBACK'), b.query('ROLLBACK')]);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused).to.have.length(1);
    expect(refused[0]!.reason).to.be.instanceOf(AppError);
    expect((refused[0]!.reason as AppError).code).to.equal('STORE_UNAVAILABLE');
    expect(((refused[0]!.reason as AppError).cause as { code?: string }).code).to.equal('40P01');
  });
});
