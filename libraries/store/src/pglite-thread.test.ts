import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPgliteThread, type PgliteHandle } from './pglite-thread.ts';
import { isStoreUnavailable } from './store-errors.ts';

describe('PGlite on its own thread', () => {
  let dir: string;
  let pglite: PgliteHandle;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chat-pglite-thread-'));
    pglite = await startPgliteThread(dir);
    await pglite.exec('CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL, at timestamptz, raw bytea)');
  });

  after(async () => {
    await pglite.close();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => pglite.exec('DELETE FROM notes'));

  it('runs parameterized queries and returns rows with their types (bytea as bytes, timestamps as dates)', async () => {
    await pglite.query('INSERT INTO notes VALUES ($1, $2, $3, $4)', [1, 'a\u2028b', '2026-01-02T03:04:05Z', new Uint8Array([0, 255])]);
    const { rows } = await pglite.query<{ id: number; body: string; at: Date; raw: Uint8Array }>('SELECT * FROM notes');
    expect(rows).to.have.length(1);
    expect(rows[0]!.body).to.equal('a\u2028b');
    expect(rows[0]!.at).to.be.instanceOf(Date);
    expect(rows[0]!.at.toISOString()).to.equal('2026-01-02T03:04:05.000Z');
    expect([...rows[0]!.raw]).to.deep.equal([0, 255]);
  });

  it('keeps a type as text when given a parser that keeps it, and array rows when asked', async () => {
    await pglite.query('INSERT INTO notes (id, body, at) VALUES (1, $1, $2)', ['x', '2026-01-02T03:04:05Z']);
    const { rows } = await pglite.query<unknown[]>('SELECT id, at FROM notes', [], { rowMode: 'array', parsers: { 1184: (value) => value } });
    expect(rows).to.deep.equal([[1, '2026-01-02 03:04:05+00']]);
  });

  it('refuses a parser that changes the value: it could not run on the other thread', async () => {
    const err = await pglite.query('SELECT 1', [], { parsers: { 23: (value) => Number(value) } }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/cannot cross threads/);
  });

  it('commits a transaction, and other statements wait until it ends', async () => {
    const order: string[] = [];
    let outside: Promise<unknown> | undefined;
    await pglite.transaction(async (tx) => {
      await tx.query('INSERT INTO notes (id, body) VALUES (1, $1)', ['in tx']);
      outside = pglite.query<{ n: number }>('SELECT count(*)::int AS n FROM notes').then((r) => {
        order.push('outside');
        return r.rows[0]!.n;
      });
      await new Promise((resolve) => setTimeout(resolve, 30));
      await tx.query('INSERT INTO notes (id, body) VALUES (2, $1)', ['in tx']);
      order.push('tx done');
    });
    expect(await outside).to.equal(2);
    expect(order).to.deep.equal(['tx done', 'outside']);
  });

  it('rolls a transaction back when its work throws, and the database goes on', async () => {
    const err = await pglite
      .transaction(async (tx) => {
        await tx.query('INSERT INTO notes (id, body) VALUES (1, $1)', ['gone']);
        throw new Error('changed my mind');
      })
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(err?.message).to.equal('changed my mind');
    expect((await pglite.query('SELECT * FROM notes')).rows).to.have.length(0);
  });

  it('passes PostgreSQL errors through with their SQLSTATE and details', async () => {
    await pglite.query('INSERT INTO notes (id, body) VALUES (1, $1)', ['first']);
    const err = (await pglite.query('INSERT INTO notes (id, body) VALUES (1, $1)', ['again']).then(
      () => undefined,
      (e: unknown) => e,
    )) as (Error & { code?: string; constraint?: string }) | undefined;
    expect(err).to.be.instanceOf(Error);
    expect(err!.code).to.equal('23505');
    expect(err!.constraint).to.equal('notes_pkey');
    expect(isStoreUnavailable(err)).to.equal(false);
  });

  it('without a template, initializes a fresh data directory on a thread that then exits, and keeps only an opened database in memory', async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'chat-pglite-fresh-'));
    const rssBefore = process.memoryUsage().rss;
    const db = await startPgliteThread(join(fresh, 'data'), { template: join(fresh, 'no-template.tar.gz') });
    try {
      expect(db.origin).to.equal('initdb');
      await db.exec('CREATE TABLE kept (id integer)');
      await db.query('INSERT INTO kept VALUES (1)');
      // initdb alone grows PGlite's memory to ~800 MB; an opened database holds ~300 MB.
      const grownMiB = (process.memoryUsage().rss - rssBefore) / 1048576;
      expect(grownMiB, 'RSS growth in MiB').to.be.below(500);
    } finally {
      await db.close();
    }
    const reopened = await startPgliteThread(join(fresh, 'data'));
    expect((await reopened.query<{ id: number }>('SELECT id FROM kept')).rows).to.deep.equal([{ id: 1 }]);
    await reopened.close();
    await rm(fresh, { recursive: true, force: true });
  });

  it('fails every call after close with an error the store reports as unavailable', async () => {
    const other = await startPgliteThread(undefined);
    await other.close();
    const err = await other.query('SELECT 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreUnavailable(err)).to.equal(true);
  });
});
