import { InProcessBackbone, type DeliveredEvent } from '@chat/backbone';
import { createLogger } from '@chat/observability';
import { createStore, migrate, openDatabase, type Database, type Store } from '@chat/store';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../test-support/new-message.ts';
import { OutboxRelay } from './outbox-relay.ts';

const bob = [{ principalKind: 'human' as const, principalId: 'u_bob', startByte: 0, endByte: 2 }];

describe('OutboxRelay (embedded database, in-process backbone)', function () {
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
    const relay = new OutboxRelay(store.outbox, backbone, logger, { graceMs: 0, intervalMs: 1000, batchSize: 2 });
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
