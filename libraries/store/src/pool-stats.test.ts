import { expect } from 'chai';
import { openDatabase, type Database } from './database.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

describe('pool occupancy (the pool-saturation metrics)', () => {
  let database: Database;
  before(async () => {
    database = await openDatabase({ kind: 'postgres', url: DATABASE_URL, poolSize: 2 });
  });
  after(() => database.close());

  it('counts connections in use, idle ones and callers waiting, out of the pool size', async () => {
    await database.ping();
    expect(database.poolStats()).to.deep.equal({ max: 2, inUse: 0, idle: 1, waiting: 0 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transactions = [0, 1].map(() => database.sql.transaction(() => held));
    // Both connections are taken by the transactions: a third caller waits.
    const waiting = database.ping();
    for (let i = 0; i < 100 && database.poolStats()?.waiting !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(database.poolStats()).to.deep.equal({ max: 2, inUse: 2, idle: 0, waiting: 1 });
    release();
    await Promise.all([...transactions, waiting]);
    expect(database.poolStats()).to.include({ inUse: 0, waiting: 0 });
  });

  it('has none on the embedded database', async () => {
    const embedded = await openDatabase({ kind: 'pglite', dataDir: 'memory://' });
    try {
      expect(embedded.poolStats()).to.equal(undefined);
    } finally {
      await embedded.close();
    }
  });
});
