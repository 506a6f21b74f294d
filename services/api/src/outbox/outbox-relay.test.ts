import { InProcessBackbone, type DeliveredEvent } from '@chat/backbone';
import { createLogger } from '@chat/observability';
import { createStore, migrate, openDatabase, type Database, type Store } from '@chat/store';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../../test/new-message.ts';
import { createOutbox } from './outbox.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const bob = [{ principalKind: 'human' as const, principalId: 'u_bob', startByte: 0, endByte: 2 }];

describe('outbox relay (embedded database, in-process backbone)', function () {
  this.timeout(60_000);
  let database: Database;
  let store: Store;
  const logger = createLogger({ name: 'relay-test', level: 'silent' });

  before(async () => {
    database = await openDatabase({ kind: 'pglite' });
    await migrate(database);
    store = createStore(database);
  });
  after(async () => database.close());

  it('publishes what nobody published, as the API would have (mentions events included), in room order, and clears it', async function () {
    const backbone = new InProcessBackbone();
    const received: DeliveredEvent[] = [];
    const subscriptions = [await backbone.subscribe('messages', (e) => received.push(e)), await backbone.subscribe('mentions', (e) => received.push(e))];
    const scope = { repositoryId: ulid(), branchId: null };
    const mentioned: string[] = [];
    // Committed, never published: the API died between commit and publish.
    for (let i = 0; i < 5; i++) {
      const outcome = await store.messages.append(scope, newMessage(i, i % 2 === 0 ? bob : null), { newRoomId: ulid(), now: new Date() });
      if (outcome.kind !== 'created') throw new Error('expected created');
      if (i % 2 === 0) mentioned.push(outcome.message.messageId);
    }
    const { relay } = createOutbox({ store, backbone, logger, settings: { graceMs: 0, batchSize: 2 } });
    expect(await relay.sweep()).to.equal(5);
    expect(received.filter((e) => e.channel === 'messages').map((e) => e.seq)).to.deep.equal([1, 2, 3, 4, 5]);
    const mentions = received.filter((e) => e.channel === 'mentions');
    expect(mentions.map((e) => [e.seq, JSON.parse(e.data).messageId])).to.deep.equal([
      [1, mentioned[0]],
      [3, mentioned[1]],
      [5, mentioned[2]],
    ]);
    expect(await store.outbox.depth()).to.equal(0);
    for (const s of subscriptions) await s.close();
    await backbone.close();
  });
});

describe('outbox relay: the relays of two API processes on one PostgreSQL', function () {
  this.timeout(60_000);
  // A schema of its own: a relay sweeps the whole outbox, and other suites share the database.
  const schemaName = `chat_relay_test_${ulid().toLowerCase()}`;
  const url = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schemaName}`)}`;
  let admin: Database;
  let databases: Database[] = [];
  const logger = createLogger({ name: 'relay-test', level: 'silent' });

  before(async () => {
    admin = await openDatabase({ kind: 'postgres', url: DATABASE_URL, poolSize: 1 });
    await admin.exec(`CREATE SCHEMA ${schemaName}`);
    databases = [await openDatabase({ kind: 'postgres', url, poolSize: 4 }), await openDatabase({ kind: 'postgres', url, poolSize: 4 })];
    await migrate(databases[0]!);
  });
  after(async () => {
    for (const database of databases) await database.close();
    await admin.exec(`DROP SCHEMA IF EXISTS ${schemaName} CASCADE`);
    await admin.close();
  });

  it('take turns: sweeping at the same time, they publish every entry once, each room in order', async () => {
    const [storeA, storeB] = databases.map((d) => createStore(d)) as [Store, Store];
    const scopes = Array.from({ length: 3 }, () => ({ repositoryId: ulid(), branchId: null }));
    // Committed, never published: the API died between commit and publish, 3 rooms × 100 times.
    for (let i = 0; i < 100; i++) {
      for (const scope of scopes) {
        const outcome = await storeA.messages.append(scope, newMessage(i, null), { newRoomId: ulid(), now: new Date() });
        if (outcome.kind !== 'created') throw new Error('expected created');
      }
    }
    const backbone = new InProcessBackbone();
    const received: DeliveredEvent[] = [];
    const subscription = await backbone.subscribe('messages', (e) => received.push(e));
    const settings = { graceMs: 0, intervalMs: 1000, batchSize: 20 };
    const relays = [storeA, storeB].map((store) => createOutbox({ store, backbone, logger, settings }).relay);
    for (let round = 0; round < 50 && (await storeA.outbox.depth()) > 0; round++) await Promise.all(relays.map((r) => r.sweep()));

    expect(await storeA.outbox.depth(), 'every entry published and removed').to.equal(0);
    const byRoom = new Map<string, number[]>();
    for (const e of received) byRoom.set(e.scopeKey, [...(byRoom.get(e.scopeKey) ?? []), e.seq]);
    const inOrderOnce = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([...byRoom.values()], 'each room: seq 1..100, once each, in order').to.deep.equal([inOrderOnce, inOrderOnce, inOrderOnce]);
    await subscription.close();
    await backbone.close();
  });
});
