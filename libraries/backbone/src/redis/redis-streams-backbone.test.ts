import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AppError } from '@chat/contracts';
import type { DeliveredEvent } from '../backbone.ts';
import { events, runBackboneContract, waitFor } from '../../test/backbone-contract.ts';
import { RedisStreamsBackbone, type RedisStreamsBackboneOptions } from './redis-streams-backbone.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const admin = new Redis(REDIS_URL);
const prefixes: string[] = [];

function freshPrefix(): string {
  const prefix = `test-backbone-${randomUUID().slice(0, 8)}`;
  prefixes.push(prefix);
  return prefix;
}

async function keysOf(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

function backboneOn(prefix: string, extra: Partial<RedisStreamsBackboneOptions> = {}): RedisStreamsBackbone {
  return new RedisStreamsBackbone({ redis: REDIS_URL, keyPrefix: prefix, subscribeBlockMs: 500, ...extra });
}

afterEach(async () => {
  for (const prefix of prefixes.splice(0)) {
    const keys = await keysOf(prefix);
    if (keys.length > 0) await admin.del(...keys);
    expect(await keysOf(prefix)).to.deep.equal([]);
  }
});

after(() => admin.disconnect());

runBackboneContract('RedisStreamsBackbone', async (opts) => backboneOn(freshPrefix(), opts));

describe('RedisStreamsBackbone (Redis specifics)', function () {
  this.timeout(20_000);
  const opened: RedisStreamsBackbone[] = [];
  const open = (prefix: string, extra: Partial<RedisStreamsBackboneOptions> = {}): RedisStreamsBackbone => {
    const backbone = backboneOn(prefix, extra);
    opened.push(backbone);
    return backbone;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((b) => b.close()));
  });

  it('keeps every key under the prefix, one Cluster hash tag per partition, a scope in one partition', async () => {
    const prefix = freshPrefix();
    const backbone = open(prefix, { partitions: 16 });
    const rooms = Array.from({ length: 40 }, () => `room-${randomUUID()}`);
    await backbone.publish(rooms.flatMap((room) => events('messages', room, 1, 3)));
    const consumer = await backbone.consume(
      { channel: 'messages', group: 'g', consumer: 'c', blockMs: 50, claimIdleMs: 50, maxDeliveries: 1 },
      async (e) => {
        if (e.scopeKey === rooms[0] && e.seq === 1) throw new Error('poison');
      },
    );
    await waitFor(async () => (await backbone.deadLetters('messages')).length === 1, 5000, 'a dead letter');
    await consumer.stop();

    const keys = await keysOf(prefix);
    const layout = new RegExp(`^${prefix}:\\{(messages|notifications):(\\d{2})\\}:(stream|dead)$`);
    expect(keys.every((k) => layout.test(k)), keys.join(', ')).to.equal(true);
    expect(keys.filter((k) => k.endsWith(':stream'))).to.have.length(16);
    const dead = keys.find((k) => k.endsWith(':dead')) as string;
    expect(keys).to.include(dead.replace(/:dead$/, ':stream'));

    for (const room of rooms.slice(0, 5)) {
      const key = backbone.keys.stream('messages', backbone.keys.partitionOf(room));
      const entries = await admin.xrange(key, '-', '+');
      const seqs = entries.filter(([, f]) => f[1] === room).map(([, f]) => Number(f[3]));
      expect(seqs).to.deep.equal([1, 2, 3]);
    }
  });

  it('acknowledges the entries of one read in one round trip, and with lingerMs a trickle shares reads', async () => {
    const prefix = freshPrefix();
    const backbone = open(prefix, { partitions: 4 });
    const xackCalls = async () => Number(/cmdstat_xack:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    let handled = 0;
    // Published before the member starts, so its first read takes all 40 at once.
    const rooms = Array.from({ length: 10 }, () => `room-${randomUUID()}`);
    await backbone.publish(rooms.flatMap((room) => events('messages', room, 1, 4)));
    const before = await xackCalls();
    const consumer = await backbone.consume(
      { channel: 'messages', group: 'g-ack', consumer: 'c', batchSize: 64, blockMs: 200, claimIdleMs: 10_000, lingerMs: 30 },
      async () => {
        handled++;
      },
    );
    await waitFor(async () => (await consumer.stats()).acked === 40, 5000, '40 acked');
    expect(await xackCalls(), 'one XACK per partition, not per entry').to.be.at.most(before + 4);

    // A trickle: one entry every 5 ms. Without lingering each read would take one.
    const trickleRoom = `room-${randomUUID()}`;
    const xackBefore = await xackCalls();
    for (let seq = 1; seq <= 30; seq++) {
      await backbone.publish(events('messages', trickleRoom, seq, 1));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await waitFor(async () => (await consumer.stats()).acked === 70, 5000, '70 acked');
    const trickleAcks = (await xackCalls()) - xackBefore;
    expect(handled).to.equal(70);
    expect(trickleAcks, 'acknowledgements (one per read) for 30 trickled entries').to.be.below(15);
    expect((await consumer.stats()).pending).to.equal(0);
    await consumer.stop();
  });

  it('carries events between separate instances (publisher and gateway processes)', async () => {
    const prefix = freshPrefix();
    const publisher = open(prefix);
    const gateway = open(prefix);
    const received: DeliveredEvent[] = [];
    await gateway.subscribe('notifications', (e) => received.push(e));
    const inbox = `inbox-${randomUUID()}`;
    await publisher.publish(events('notifications', inbox, 1, 50));
    await waitFor(() => received.length >= 50, 5000, '50 events');
    expect(received.map((e) => e.seq)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('reports a lost subscriber connection and resumes from the last seen entries', async () => {
    const prefix = freshPrefix();
    const backbone = open(prefix);
    const received: DeliveredEvent[] = [];
    const errors: Error[] = [];
    await backbone.subscribe('messages', (e) => received.push(e), (err) => errors.push(err));
    const room = `room-${randomUUID()}`;
    await backbone.publish(events('messages', room, 1, 5));
    await waitFor(() => received.length >= 5, 5000, 'first events');

    const clients = await admin.client('LIST');
    const subscriber = String(clients)
      .split('\n')
      .find((line) => line.includes(`name=${prefix}:backbone:sub:messages`));
    const id = /\bid=(\d+)/.exec(subscriber ?? '')?.[1];
    expect(id, 'subscriber connection').to.be.a('string');
    await admin.client('KILL', 'ID', id as string);
    await backbone.publish(events('messages', room, 6, 5));

    await waitFor(() => errors.length >= 1, 5000, 'onError');
    await waitFor(() => received.length >= 10, 8000, 'events after the reconnect');
    await backbone.publish(events('messages', room, 11, 5));
    await waitFor(() => received.length >= 15, 5000, 'live again');
    expect(received.map((e) => e.seq)).to.deep.equal(Array.from({ length: 15 }, (_, i) => i + 1));
  });

  it('after an outage, rereads a partition whose ids went backwards (Redis restarted without its data)', async () => {
    const prefix = freshPrefix();
    const backbone = open(prefix);
    const received: DeliveredEvent[] = [];
    const errors: Error[] = [];
    await backbone.subscribe('messages', (e) => received.push(e), (err) => errors.push(err));
    const room = `room-${randomUUID()}`;
    await backbone.publish(events('messages', room, 1, 3));
    await waitFor(() => received.length >= 3, 5000, 'first events');

    const key = backbone.keys.stream('messages', backbone.keys.partitionOf(room));
    const clients = String(await admin.client('LIST')).split('\n');
    const id = /\bid=(\d+)/.exec(clients.find((l) => l.includes(`name=${prefix}:backbone:sub:messages`)) ?? '')?.[1];
    await admin.client('KILL', 'ID', id as string);
    await admin.del(key);
    await admin.xadd(key, '1-1', 'scopeKey', room, 'seq', '4', 'data', '{}');

    await waitFor(() => errors.length >= 1, 5000, 'onError');
    await waitFor(() => received.length >= 4, 8000, 'the entry with a lower id');
    expect(received.map((e) => [e.seq, e.entryId])).to.deep.equal([
      ...received.slice(0, 3).map((e) => [e.seq, e.entryId]),
      [4, '1-1'],
    ]);
  });

  it('recreates its group when Redis comes back without it, and goes on consuming', async () => {
    const prefix = freshPrefix();
    const backbone = open(prefix);
    const handled: number[] = [];
    const errors: Error[] = [];
    const consumer = await backbone.consume(
      { channel: 'notifications', group: 'g', consumer: 'c', blockMs: 50, onError: (err) => errors.push(err) },
      async (e) => void handled.push(e.seq),
    );
    const inbox = `inbox-${randomUUID()}`;
    await backbone.publish(events('notifications', inbox, 1, 2));
    await waitFor(() => handled.length >= 2, 5000, 'first events');
    await admin.del(...backbone.keys.streams('notifications'));
    await waitFor(() => errors.some((e) => e.message.startsWith('NOGROUP')), 5000, 'NOGROUP reported');
    await waitFor(async () => (await admin.exists(backbone.keys.stream('notifications', 0))) === 1, 5000, 'group recreated');
    await backbone.publish(events('notifications', inbox, 3, 2));
    await waitFor(() => handled.length >= 4, 5000, 'events after the loss');
    expect(handled).to.deep.equal([1, 2, 3, 4]);
    await consumer.stop();
  });

  it('fails fast with STREAM_UNAVAILABLE when Redis is unreachable', async () => {
    const backbone = new RedisStreamsBackbone({ redis: 'redis://127.0.0.1:1', operationTimeoutMs: 300 });
    opened.push(backbone);
    const attempts: [string, () => Promise<unknown>][] = [
      ['publish', () => backbone.publish(events('messages', 'room', 1, 3))],
      ['ping', () => backbone.ping()],
      ['subscribe', () => backbone.subscribe('messages', () => undefined)],
      ['consume', () => backbone.consume({ channel: 'messages', group: 'g', consumer: 'c' }, async () => undefined)],
      ['trim', () => backbone.trim('messages')],
    ];
    for (const [name, attempt] of attempts) {
      const started = Date.now();
      const error = await attempt().then(
        () => null,
        (err: unknown) => err,
      );
      expect(error, name).to.be.instanceOf(AppError);
      expect((error as AppError).code, name).to.equal('STREAM_UNAVAILABLE');
      expect((error as AppError).status, name).to.equal(503);
      expect(Date.now() - started, name).to.be.below(1500);
    }
  });
});
