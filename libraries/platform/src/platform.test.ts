import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { newUlid } from '@chat/contracts';
import { createLogger } from '@chat/observability';
import { openPlatform, type Platform } from './platform.ts';

describe('platform (the composition root)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let platform: Platform;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'platform-'));
    platform = await openPlatform(
      {
        database: { url: undefined, dataDir, poolSize: 1 },
        redis: { url: undefined, keyPrefix: 'chat' },
        // Nothing listens here: calls fail fast, which is all the observer test needs.
        core: { url: 'http://127.0.0.1:9', serviceToken: 'platform-test-service-token', timeoutMs: 500 },
        cursor: { secret: undefined, previousSecrets: [] },
      },
      createLogger({ name: 'platform-test', level: 'silent' }),
    );
  });
  after(async () => {
    await platform?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('opens a migrated database with one store, and hands out the same parts every time', async () => {
    expect(platform.database.kind).to.equal('pglite');
    await platform.database.ping();
    const store = platform.store;
    const cursors = platform.cursors;
    expect(platform.store, 'a second read of store').to.equal(store);
    expect(platform.cursors, 'a second read of cursors').to.equal(cursors);
    expect(store.database).to.equal(platform.database);
    // The store works on the migrated database: a room written through one read is found through the next.
    const scope = { repositoryId: newUlid(), branchId: null };
    const room = await store.rooms.materialize(scope, { roomId: newUlid(), now: new Date() });
    expect((await platform.store.rooms.find(scope))?.roomId).to.equal(room.roomId);
    expect(cursors.encode).to.be.a('function');
  });

  it('refuses a part whose settings the process did not give', () => {
    expect(() => platform.leases).to.throw(/no stream-cap settings/);
  });

  it('tells every registered observer about each core call, until it is removed', async () => {
    const seen: string[][] = [[], []];
    const removeFirst = platform.observeCoreCalls((operation, _s, outcome) => seen[0]!.push(`${operation}:${outcome}`));
    platform.observeCoreCalls((operation, _s, outcome) => seen[1]!.push(`${operation}:${outcome}`));
    await platform.core.ping().catch(() => undefined);
    removeFirst();
    await platform.core.ping().catch(() => undefined);
    expect(seen[0]).to.deep.equal(['ping:error']);
    expect(seen[1]).to.deep.equal(['ping:error', 'ping:error']);
  });

  it('names its readiness checks postgres, redis and core', () => {
    expect(platform.readinessChecks().map((c) => c.name)).to.deep.equal(['postgres', 'redis', 'core']);
  });
});
