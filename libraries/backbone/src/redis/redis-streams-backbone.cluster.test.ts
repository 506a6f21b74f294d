import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startRedisCluster, type RedisCluster } from '../../../../tests/harness/redis-cluster.ts';
import type { DeliveredEvent } from '../backbone.ts';
import { events, runBackboneContract, waitFor } from '../../test/backbone-contract.ts';
import { RedisStreamsBackbone, type RedisStreamsBackboneOptions } from './redis-streams-backbone.ts';
import type { RedisClusterTarget } from '@chat/redis-client';

describe('RedisStreamsBackbone on a Redis Cluster (3 masters, 3 replicas)', function () {
  this.timeout(60_000);
  let cluster: RedisCluster;
  let target: RedisClusterTarget;
  const opened: RedisStreamsBackbone[] = [];
  const open = (extra: Partial<RedisStreamsBackboneOptions> = {}): RedisStreamsBackbone => {
    const backbone = new RedisStreamsBackbone({ redis: target, keyPrefix: `test-backbone-${randomUUID().slice(0, 8)}`, subscribeBlockMs: 500, ...extra });
    opened.push(backbone);
    return backbone;
  };

  before(async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: 1 });
    target = { clusterNodes: cluster.seedNodes.map((n) => ({ host: '127.0.0.1', port: Number(n.split(':')[1]) })) };
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((b) => b.close()));
  });
  after(async () => {
    await cluster?.stop();
  });

  runBackboneContract('RedisStreamsBackbone (Cluster)', async (opts) => open(opts));

  it('spreads the partitions over every master and reads each on its own connection (no CROSSSLOT)', async () => {
    const backbone = open({ partitions: 16 });
    const owners = new Set(await Promise.all(backbone.keys.streams('messages').map((key) => cluster.masterOf(key))));
    expect(owners.size, 'masters holding a partition').to.equal(3);
    const seen: DeliveredEvent[] = [];
    const errors: Error[] = [];
    const subscription = await backbone.subscribe('messages', (e) => seen.push(e), (err) => errors.push(err));
    const rooms = Array.from({ length: 48 }, () => `room-${randomUUID()}`);
    await backbone.publish(rooms.flatMap((room) => events('messages', room, 1, 5)));
    await waitFor(() => seen.length === 240, 10_000, '240 events');
    for (const room of rooms) expect(seen.filter((e) => e.scopeKey === room).map((e) => e.seq)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(errors).to.deep.equal([]);
    await subscription.close();
  });

  it('keeps delivering after the master of a partition is killed and its replica takes over', async () => {
    const backbone = open({ partitions: 8, operationTimeoutMs: 1000, blockingGraceMs: 1000 });
    const room = `room-${randomUUID()}`;
    const victim = await cluster.masterOf(backbone.keys.stream('messages', backbone.keys.partitionOf(room)));
    const seen: number[] = [];
    const errors: Error[] = [];
    const subscription = await backbone.subscribe('messages', (e) => e.scopeKey === room && seen.push(e.seq), (err) => errors.push(err));
    await backbone.publish(events('messages', room, 1, 3));
    await waitFor(() => seen.length === 3, 10_000, 'events before the kill');
    await cluster.kill(victim);
    // The publisher retries as the outbox relay does: a failed publish is sent again, whole.
    let seq = 4;
    const deadline = Date.now() + 30_000;
    while (seq <= 10 && Date.now() < deadline) {
      try {
        await backbone.publish(events('messages', room, seq, 1));
        seq++;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await waitFor(() => seen.includes(10), 20_000, 'events after the failover');
    const afterKill = seen.slice(3).filter((s) => s >= 4);
    expect([...new Set(afterKill)].sort((a, b) => a - b)).to.deep.equal([4, 5, 6, 7, 8, 9, 10]);
    expect(errors.length, 'the outage is reported, so a gateway re-syncs').to.be.above(0);
    await subscription.close();
    await cluster.waitHealthy();
  });
});
