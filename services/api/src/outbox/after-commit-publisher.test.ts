import { InProcessBackbone, type DeliveredEvent } from '@chat/backbone';
import { createLogger } from '@chat/observability';
import { createStore, migrate, openDatabase, type Database, type NewMessage, type Store } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../../test/new-message.ts';
import { createOutbox, type Outbox } from './outbox.ts';

describe('outbox: publish after commit (embedded database, in-process backbone)', function () {
  this.timeout(60_000);
  let database: Database;
  let store: Store;
  let backbone: InProcessBackbone;
  const logger = createLogger({ name: 'publisher-test', level: 'silent' });

  before(async () => {
    database = await openDatabase({ kind: 'pglite' });
    await migrate(database);
    store = createStore(database);
  });
  beforeEach(() => {
    backbone = new InProcessBackbone();
  });
  afterEach(async () => {
    await backbone.close();
  });
  after(async () => {
    await database.close();
  });

  /** Appends `count` messages to one room, one tick apart, and hands each to the publisher as the API does. */
  async function appendAndPublish({ publisher }: Outbox, count: number, mentionsOf: (i: number) => NewMessage['mentions'] = () => null) {
    const scope = { repositoryId: ulid(), branchId: null };
    const published: Array<Promise<void>> = [];
    const sent: string[] = [];
    for (let i = 0; i < count; i++) {
      const outcome = await store.messages.append(scope, newMessage(i, mentionsOf(i)), { newRoomId: ulid(), now: new Date() });
      if (outcome.kind !== 'created') throw new Error('expected created');
      const message = toMessageResponse(outcome.message);
      const payload = JSON.stringify(message);
      sent.push(payload);
      published.push(
        publisher.publishCommitted({
          outboxId: outcome.outboxId,
          roomId: message.roomId,
          seq: outcome.message.seq,
          messageId: message.messageId,
          mentionsSomeone: (message.mentions?.length ?? 0) > 0,
          payload,
        }),
      );
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(published);
    return sent;
  }

  it('publishes every committed message in order and deletes the outbox rows of many ticks in few statements', async function () {
    let removeCalls = 0;
    const counting = { ...store.outbox, remove: (ids: number[]) => ((removeCalls += 1), store.outbox.remove(ids)) };
    const outbox = createOutbox({ store: { outbox: counting }, backbone, logger, settings: { removalDelayMs: 200 } });
    const received: DeliveredEvent[] = [];
    const subscription = await backbone.subscribe('messages', (e) => received.push(e));

    const sent = await appendAndPublish(outbox, 30);
    expect(received.map((e) => e.data)).to.deep.equal(sent);
    expect(received.map((e) => e.seq)).to.deep.equal(sent.map((_, i) => i + 1));

    await new Promise((r) => setTimeout(r, 400));
    expect(await store.outbox.depth()).to.equal(0);
    // 30 publishes over ~30 ticks; their rows leave in a handful of deletes, not 30.
    expect(removeCalls).to.be.within(1, 5);
    await subscription.close();
  });

  it('publishes a mentions event, with only the message ID, for each message that mentions anyone', async function () {
    const outbox = createOutbox({ store, backbone, logger, settings: { removalDelayMs: 10 } });
    const mentions: DeliveredEvent[] = [];
    const messages: DeliveredEvent[] = [];
    const subscriptions = [await backbone.subscribe('mentions', (e) => mentions.push(e)), await backbone.subscribe('messages', (e) => messages.push(e))];
    const bob = [{ principalKind: 'human' as const, principalId: 'u_bob', startByte: 0, endByte: 2 }];
    const sent = await appendAndPublish(outbox, 6, (i) => (i % 3 === 0 ? bob : null));
    expect(messages).to.have.length(6);
    const mentioning = sent.map((payload) => JSON.parse(payload) as { messageId: string; roomId: string }).filter((_, i) => i % 3 === 0);
    expect(mentions.map((e) => [e.scopeKey, e.seq, JSON.parse(e.data)])).to.deep.equal(
      mentioning.map((m, k) => [m.roomId, k * 3 + 1, { messageId: m.messageId }]),
    );
    await outbox.flush();
    for (const s of subscriptions) await s.close();
  });

  it('deletes what it published at once on flush (shutdown)', async function () {
    const outbox = createOutbox({ store, backbone, logger, settings: { removalDelayMs: 60_000 } });
    await appendAndPublish(outbox, 5);
    expect(await store.outbox.depth()).to.equal(5);
    await outbox.flush();
    expect(await store.outbox.depth()).to.equal(0);
  });

  it('leaves the rows to the relay when the backbone is down, which publishes the same bytes', async function () {
    const down = new InProcessBackbone();
    const outbox = createOutbox({ store, backbone: down, logger, settings: { removalDelayMs: 10, graceMs: 0 } });
    await down.close();
    const sent = await appendAndPublish(outbox, 3);
    await outbox.flush();
    expect(await store.outbox.depth(), 'nothing deleted that was not published').to.equal(3);
    const relay = createOutbox({ store, backbone, logger, settings: { graceMs: 0 } });
    const received: DeliveredEvent[] = [];
    const subscription = await backbone.subscribe('messages', (e) => received.push(e));
    expect(await relay.relay.sweep()).to.equal(3);
    expect(received.map((e) => e.data), "the relay's event data is the publisher's, byte for byte").to.deep.equal(sent);
    expect(await store.outbox.depth()).to.equal(0);
    await subscription.close();
  });
});
