import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { newUlid } from '@chat/contracts';
import { createLogger } from '@chat/observability';
import { databaseTargetFor, openDatabase } from '@chat/store';
import { openProcessResources, type ProcessResources } from './process-resources.ts';

describe('process resources (the composition root)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let resources: ProcessResources;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'process-resources-'));
    resources = await openProcessResources(
      {
        database: { url: undefined, dataDir, poolSize: 1 },
        redis: { url: undefined, keyPrefix: 'chat' },
        // Nothing listens here: calls fail fast, which is all the observer test needs.
        core: { url: 'http://127.0.0.1:9', serviceToken: 'process-resources-test-service-token', timeoutMs: 500 },
        cursor: { secret: undefined, previousSecrets: [] },
      },
      createLogger({ name: 'process-resources-test', level: 'silent' }),
    );
  });
  after(async () => {
    await resources?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('opens a migrated database with one store, and hands out the same parts every time', async () => {
    expect(resources.database.kind).to.equal('pglite');
    await resources.database.ping();
    const store = resources.store;
    const cursors = resources.cursors;
    expect(resources.store, 'a second read of store').to.equal(store);
    expect(resources.cursors, 'a second read of cursors').to.equal(cursors);
    expect(store.database).to.equal(resources.database);
    // The store works on the migrated database: a room written through one read is found through the next.
    const scope = { repositoryId: newUlid(), branchId: null };
    const room = await store.rooms.materialize(scope, { roomId: newUlid(), now: new Date() });
    expect((await resources.store.rooms.find(scope))?.roomId).to.equal(room.roomId);
    expect(cursors.encode).to.be.a('function');
  });

  it('refuses a part whose settings the process did not give', () => {
    expect(() => resources.leases).to.throw(/no stream-cap settings/);
  });

  it('tells every registered observer about each core call, until it is removed', async () => {
    const seen: string[][] = [[], []];
    const removeFirst = resources.observeCoreCalls((operation, _s, outcome) => seen[0]!.push(`${operation}:${outcome}`));
    resources.observeCoreCalls((operation, _s, outcome) => seen[1]!.push(`${operation}:${outcome}`));
    await resources.core.ping().catch(() => undefined);
    removeFirst();
    await resources.core.ping().catch(() => undefined);
    expect(seen[0]).to.deep.equal(['ping:error']);
    expect(seen[1]).to.deep.equal(['ping:error', 'ping:error']);
  });

  it('names its readiness checks postgres, redis and core', () => {
    expect(resources.readinessChecks().map((c) => c.name)).to.deep.equal(['postgres', 'redis', 'core']);
  });

  it('leaves the schema alone when told a migration Job owns it (migrateOnStart false)', async () => {
    const serverUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const name = `process_resources_${newUlid().toLowerCase()}`;
    const server = await openDatabase(databaseTargetFor({ databaseUrl: serverUrl, dataDir: dataDir, poolSize: 1 }));
    await server.exec(`CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    try {
      const opening = openProcessResources(
        {
          database: { url: url.toString(), dataDir, poolSize: 1, migrateOnStart: false },
          redis: { url: undefined, keyPrefix: 'chat' },
          core: { url: 'http://127.0.0.1:9', serviceToken: 'process-resources-test-service-token', timeoutMs: 500 },
          cursor: { secret: undefined, previousSecrets: [] },
        },
        createLogger({ name: 'process-resources-test', level: 'silent' }),
      );
      // The empty database was not migrated, so the first table the process reads is missing.
      await opening.then(
        (opened) => opened.close().then(() => expect.fail('opened an unmigrated database')),
        (err: Error & { cause?: Error }) => expect(`${err.message} ${err.cause?.message ?? ''}`).to.match(/relation "service_keys" does not exist/),
      );
    } finally {
      await server.exec(`DROP DATABASE ${name} WITH (FORCE)`);
      await server.close();
    }
  });
});
