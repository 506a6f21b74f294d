import { InProcessBackbone, type Backbone } from '@chat/backbone';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { FanoutSettledError, type MessageRow } from '@chat/store';
import { fanoutMessage } from './domain/fanout-message.ts';
import { createNotifierRuntime, type NotifierRuntime, type NotifierSettingsInput } from './runtime.ts';
import {
  appendMessage,
  assertTotalOrder,
  inboxOf,
  listInbox,
  mention,
  messageEvents,
  openWorld,
  redisBackbone,
  waitFor,
  type TestWorld,
} from '../test/notifier-harness.ts';

describe('notifier on PostgreSQL, Redis and dev-core', function () {
  this.timeout(60_000);
  let world: TestWorld;
  const started: Array<{ runtime: NotifierRuntime; backbone: Backbone }> = [];

  before(async () => {
    world = await openWorld();
  });
  after(async () => world.close());
  afterEach(async () => {
    for (const { runtime, backbone } of started.splice(0)) {
      await runtime.stop();
      await backbone.close();
    }
    world.core.setFaults({ authorization: 'ok' });
  });

  /** A notifier on its own backbone object; `prefix` shares Redis streams between instances. */
  async function startNotifier(backbone: Backbone, settings: NotifierSettingsInput = {}): Promise<NotifierRuntime> {
    const runtime = createNotifierRuntime({ resources: { store: world.store, backbone, core: world.coreClient, cursors: world.cursors }, logger: world.logger, settings });
    await runtime.start();
    started.push({ runtime, backbone });
    return runtime;
  }

  // The sweeper is kept out of the way (long grace) when a test is about the backbone path.
  const backboneOnly: NotifierSettingsInput = { sweeper: { graceMs: 3_600_000 }, consumer: { claimIdleMs: 1000 } };
  const repo = () => ({ repositoryId: world.repositoryId, branchId: null });

  it('writes one notification per target with its merged spans, through the backbone path', async function () {
    const prefix = `t-${ulid()}`;
    const runtime = await startNotifier(redisBackbone(prefix), backboneOnly);
    const publisher = redisBackbone(prefix);
    const body = '@bob and @ci, again @bob';
    const message = await appendMessage(world.store, repo(), [mention('human', 'u_bob', 0, 4), mention('bot', 'b_ci', 9, 12), mention('human', 'u_bob', 20, 24)], body);
    await publisher.publish(messageEvents(message));
    const bob = inboxOf(world.repositoryId, 'human', 'u_bob');
    await waitFor('the fanout', async () => (await world.store.mentionFanout.find(message.messageId)) === null);
    const [notification] = (await listInbox(world.store, bob)).filter((n) => n.messageId === message.messageId);
    expect(notification).to.include({ targetKind: 'human', targetId: 'u_bob', roomId: message.roomId, senderKind: 'user', senderId: 'u_alice', branchId: null });
    expect(notification!.spans).to.deep.equal([{ startByte: 0, endByte: 4 }, { startByte: 20, endByte: 24 }]);
    const ci = (await listInbox(world.store, inboxOf(world.repositoryId, 'bot', 'b_ci'))).filter((n) => n.messageId === message.messageId);
    expect(ci.map((n) => n.spans)).to.deep.equal([[{ startByte: 9, endByte: 12 }]]);
    expect((await runtime.metrics.registry.getSingleMetricAsString('chat_notifier_fanouts_total'))).to.match(/path="backbone",outcome="done"} 1/);
    await publisher.close();
  });

  it('reads only the mentions channel: a message without mentions never reaches it', async function () {
    const prefix = `t-${ulid()}`;
    const backbone = redisBackbone(prefix);
    const consumed: string[] = [];
    const consume = backbone.consume.bind(backbone);
    backbone.consume = (options, handler) => {
      consumed.push(options.channel);
      return consume(options, handler);
    };
    await startNotifier(backbone, backboneOnly);
    const publisher = redisBackbone(prefix);
    const plain = await appendMessage(world.store, repo(), []);
    const mentioned = await appendMessage(world.store, repo(), [mention('human', 'u_bob', 0, 4)]);
    expect(messageEvents(plain).map((e) => e.channel)).to.deep.equal(['messages']);
    expect(messageEvents(mentioned).map((e) => e.channel)).to.deep.equal(['messages', 'mentions']);
    await publisher.publish([...messageEvents(plain), ...messageEvents(mentioned)]);
    await waitFor('the fanout', async () => (await world.store.mentionFanout.find(mentioned.messageId)) === null);
    expect(consumed).to.deep.equal(['mentions']);
    await publisher.close();
  });

  it('gives targets that may not read the scope nothing, and carries branchId for branch rooms', async function () {
    const prefix = `t-${ulid()}`;
    await startNotifier(redisBackbone(prefix), backboneOnly);
    const publisher = redisBackbone(prefix);
    const message = await appendMessage(
      world.store,
      { repositoryId: world.repositoryId, branchId: world.branchId },
      [mention('human', 'u_carol', 0, 2), mention('bot', 'b_writer', 3, 5), mention('human', 'u_ghost', 6, 8), mention('human', 'u_alice', 9, 11)],
    );
    await publisher.publish(messageEvents(message));
    await waitFor('the fanout', async () => (await world.store.mentionFanout.find(message.messageId)) === null);
    for (const [kind, id] of [['human', 'u_carol'], ['bot', 'b_writer'], ['human', 'u_ghost']] as const) {
      expect(await world.store.inboxes.find({ repositoryId: world.repositoryId, principalKind: kind, principalId: id })).to.equal(null);
    }
    const alice = (await listInbox(world.store, inboxOf(world.repositoryId, 'human', 'u_alice'))).filter((n) => n.messageId === message.messageId);
    expect(alice).to.have.length(1);
    expect(alice[0]!.branchId).to.equal(world.branchId);
    await publisher.close();
  });

  it('makes no second notification when a message is delivered or fanned out again', async function () {
    const prefix = `t-${ulid()}`;
    await startNotifier(redisBackbone(prefix), backboneOnly);
    const publisher = redisBackbone(prefix);
    const message = await appendMessage(world.store, repo(), [mention('human', 'u_bob', 0, 4)]);
    const row = (await world.store.mentionFanout.find(message.messageId))!;
    // A worker whose claim lapsed runs the row again after another settled it: it writes nothing.
    const deps = { store: world.store, core: world.coreClient, backbone: publisher, logger: world.logger, clock: () => new Date() };
    expect((await fanoutMessage(deps, row)).created).to.equal(1);
    const again = await fanoutMessage(deps, row).catch((err: unknown) => err);
    expect(again).to.be.instanceOf(FanoutSettledError);
    await publisher.publish([...messageEvents(message), ...messageEvents(message)]);
    await waitFor('the fanout', async () => (await world.store.mentionFanout.find(message.messageId)) === null);
    await publisher.publish(messageEvents(message));
    await new Promise((r) => setTimeout(r, 300));
    const bob = (await listInbox(world.store, inboxOf(world.repositoryId, 'human', 'u_bob'))).filter((n) => n.messageId === message.messageId);
    expect(bob).to.have.length(1);
    await publisher.close();
  });

  it('fans out from the durable record when the backbone never delivers (sweeper path)', async function () {
    // Nothing is ever published on this backbone: only the fanout rows in PostgreSQL remain.
    await startNotifier(new InProcessBackbone(), { sweeper: { graceMs: 200, intervalMs: 50 } });
    const messages: Array<{ messageId: string }> = [];
    for (let i = 0; i < 5; i++) messages.push(await appendMessage(world.store, repo(), [mention('bot', 'b_ci', 0, 3)]));
    await waitFor('the sweeper', async () => (await Promise.all(messages.map((m) => world.store.mentionFanout.find(m.messageId)))).every((r) => r === null));
    const ci = await listInbox(world.store, inboxOf(world.repositoryId, 'bot', 'b_ci'));
    expect(messages.map((m) => ci.filter((n) => n.messageId === m.messageId).length)).to.deep.equal([1, 1, 1, 1, 1]);
  });

  it('keeps the fanout while core is unavailable and finishes it when core returns', async function () {
    await startNotifier(new InProcessBackbone(), { sweeper: { graceMs: 0, intervalMs: 50 }, processor: { retryDelayMs: 50, maxAttempts: 2 } });
    world.core.setFaults({ authorization: 'unavailable' });
    const message = await appendMessage(world.store, repo(), [mention('human', 'u_bob', 0, 4)]);
    await new Promise((r) => setTimeout(r, 600));
    const waiting = await world.store.mentionFanout.find(message.messageId);
    // A retry ran every 50 ms; had the outage counted as attempts, the second would have
    // dead-lettered the row. `attempts` is 1 while a retry holds its claim, 0 between retries.
    expect(waiting?.dead).to.equal(false);
    expect(waiting?.attempts).to.be.at.most(1);
    expect(waiting?.lastError).to.match(/AUTHORIZATION_UNAVAILABLE|unavailable/i);
    world.core.setFaults({ authorization: 'ok' });
    await waitFor('recovery', async () => (await world.store.mentionFanout.find(message.messageId)) === null);
    const bob = (await listInbox(world.store, inboxOf(world.repositoryId, 'human', 'u_bob'))).filter((n) => n.messageId === message.messageId);
    expect(bob).to.have.length(1);
  });

  it('dead-letters a poison fanout after its attempts and keeps it for operators', async function () {
    const runtime = await startNotifier(new InProcessBackbone(), { sweeper: { graceMs: 0, intervalMs: 30 }, processor: { retryDelayMs: 10, maxAttempts: 3 } });
    const message = await appendMessage(world.store, repo(), [mention('human', 'u_bob', 0, 4)]);
    // Corrupt the record: it points at a seq that holds no such message, which no retry can fix.
    await world.database.exec(`UPDATE mention_fanout SET seq = seq + 1000 WHERE message_id = '${message.messageId}'`);
    await waitFor('the dead letter', async () => (await world.store.mentionFanout.find(message.messageId))?.dead === true);
    const dead = await world.store.mentionFanout.find(message.messageId);
    expect(dead).to.include({ attempts: 3 });
    expect(dead?.lastError).to.match(/PoisonFanoutError/);
    await new Promise((r) => setTimeout(r, 200));
    expect((await world.store.mentionFanout.find(message.messageId))?.attempts).to.equal(3);
    expect(await runtime.metrics.registry.getSingleMetricAsString('chat_notifier_fanouts_total')).to.match(/outcome="dead"} 1/);
  });

  it('runs the rows behind a held room head once it is settled, in order, with no sweeper', async function () {
    const prefix = `t-${ulid()}`;
    const runtime = await startNotifier(redisBackbone(prefix), backboneOnly);
    const publisher = redisBackbone(prefix);
    const scope = { repositoryId: world.repositoryId, branchId: world.branchId };
    const sent: MessageRow[] = [];
    for (let i = 0; i < 30; i++) sent.push(await appendMessage(world.store, scope, [mention('human', 'u_alice', 0, 4)]));
    // Another worker holds the room's first row: every event finds its row behind it and does nothing.
    const head = (await world.store.mentionFanout.claim(sent[0]!.messageId, { now: new Date(), leaseMs: 60_000 }))!;
    expect(head).to.not.equal(null);
    await publisher.publish(sent.flatMap(messageEvents));
    await new Promise((r) => setTimeout(r, 500));
    expect(await world.store.mentionFanout.find(sent[1]!.messageId), 'waits behind the head').to.not.equal(null);
    // The holder settles it and goes on through the room.
    await runtime.processor.processRoom(head, 'backbone', () => true);
    expect((await Promise.all(sent.map((m) => world.store.mentionFanout.find(m.messageId)))).filter((r) => r !== null)).to.deep.equal([]);
    const ids = new Set(sent.map((m) => m.messageId));
    const alice = (await listInbox(world.store, inboxOf(world.repositoryId, 'human', 'u_alice'))).filter((n) => ids.has(n.messageId));
    expect(alice.map((n) => n.messageId)).to.deep.equal(sent.map((m) => m.messageId));
    await publisher.close();
  });

  it('dead-letters a poison row in the middle of a room and runs the rest of the room in order', async function () {
    const scope = { repositoryId: world.repositoryId, branchId: world.branchId };
    const sent: MessageRow[] = [];
    for (let i = 0; i < 5; i++) sent.push(await appendMessage(world.store, scope, [mention('bot', 'b_ci', 0, 3)]));
    // The third row names a message its seq does not hold, which no retry can fix; it keeps its place.
    const poisonId = `${sent[2]!.messageId}-poison`;
    await world.database.exec(`UPDATE mention_fanout SET message_id = '${poisonId}' WHERE message_id = '${sent[2]!.messageId}'`);
    await startNotifier(new InProcessBackbone(), { sweeper: { graceMs: 0, intervalMs: 30 }, processor: { retryDelayMs: 10, maxAttempts: 3 } });
    await waitFor('the fanouts and the dead letter', async () => {
      const rows = await Promise.all([...sent.filter((_, i) => i !== 2).map((m) => world.store.mentionFanout.find(m.messageId))]);
      return rows.every((r) => r === null) && (await world.store.mentionFanout.find(poisonId))?.dead === true;
    });
    const ids = new Set(sent.map((m) => m.messageId));
    const ci = (await listInbox(world.store, inboxOf(world.repositoryId, 'bot', 'b_ci'))).filter((n) => ids.has(n.messageId));
    expect(ci.map((n) => n.messageId)).to.deep.equal(sent.filter((_, i) => i !== 2).map((m) => m.messageId));
  });

  it('keeps every inbox gap-free and in message order within each room under two notifier instances', async function () {
    const prefix = `t-${ulid()}`;
    // Both paths race on both instances: the backbone consumer and a sweeper with no grace.
    const settings: NotifierSettingsInput = { sweeper: { graceMs: 0, intervalMs: 20, concurrency: 4 }, consumer: { claimIdleMs: 1000 } };
    await startNotifier(redisBackbone(prefix), settings);
    await startNotifier(redisBackbone(prefix), settings);
    const publisher = redisBackbone(prefix);
    const scopes = [repo(), { repositoryId: world.repositoryId, branchId: world.branchId }];
    const before = new Map<string, number>();
    const keys = [inboxOf(world.repositoryId, 'human', 'u_bob'), inboxOf(world.repositoryId, 'human', 'u_alice'), inboxOf(world.repositoryId, 'bot', 'b_ci')];
    for (const key of keys) before.set(key, (await listInbox(world.store, key)).length);
    const sent = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const message = await appendMessage(world.store, scopes[i % 2]!, [mention('human', 'u_bob', 0, 4), mention('human', 'u_alice', 5, 9), mention('bot', 'b_ci', 10, 12)]);
        await publisher.publish(messageEvents(message));
        return message;
      }),
    );
    const position = new Map(sent.map((m) => [m.messageId, `${m.roomId}:${String(m.seq).padStart(12, '0')}`]));
    await waitFor('all fanouts', async () => (await Promise.all(keys.map((k) => listInbox(world.store, k)))).every((rows, i) => rows.length >= before.get(keys[i]!)! + sent.length), 30_000, 100);
    await new Promise((r) => setTimeout(r, 300));
    for (const key of keys) {
      const rows = await listInbox(world.store, key);
      assertTotalOrder(rows);
      const mine = rows.slice(before.get(key)!).map((n) => n.messageId);
      expect(mine).to.have.length(sent.length);
      expect(new Set(mine)).to.deep.equal(new Set(sent.map((m) => m.messageId)));
      for (const room of new Set(sent.map((m) => m.roomId))) {
        const inRoom = mine.map((id) => position.get(id)!).filter((p) => p.startsWith(`${room}:`));
        expect(inRoom, `${key} in room ${room}`).to.deep.equal([...inRoom].sort());
      }
    }
    await publisher.close();
  });
});
