import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../../../tests/harness/redis-cluster.ts';
import { AppError } from '@chat/contracts';
import { runLeaseRegistryContract } from '../../test/lease-registry-contract.ts';
import { firstJsonLine, startScript } from '../../test/redis-test-support.ts';
import { RedisStreamLeaseRegistry } from '../leases/redis-stream-lease-registry.ts';
import type { RedisClusterTarget } from '@chat/redis-client';

describe('stream leases on a Redis Cluster (3 masters, 3 replicas)', function () {
  this.timeout(60_000);
  let cluster: RedisCluster;
  let target: RedisClusterTarget;
  let prefixCount = 0;
  const prefix = (kind: string) => `test-${kind}-${process.pid}-${++prefixCount}`;

  before(async () => {
    cluster = await startRedisCluster({ masters: 3, replicas: 1 });
    target = { clusterNodes: cluster.seedNodes.map((n) => ({ host: '127.0.0.1', port: Number(n.split(':')[1]) })) };
  });
  after(async () => {
    await cluster?.stop();
  });

  runLeaseRegistryContract('RedisStreamLeaseRegistry (Cluster)', async (options) => new RedisStreamLeaseRegistry({ ...options, redis: target, keyPrefix: prefix('cap') }));

  it("holds, renews and releases room streams whose principal and room sets live on different masters", async () => {
    const keyPrefix = prefix('cap');
    const registry = new RedisStreamLeaseRegistry({ redis: target, keyPrefix, principalCap: 50, roomCap: 50, leaseMs: 1500 });
    const admin = new Cluster(target.clusterNodes.map((n) => ({ ...n })));
    try {
      // Rooms whose set is on another master than the principal's: the cases one pipeline could not carry.
      const principalSet = registry.principalSetKey('p1');
      const principalMaster = await cluster.masterOf(principalSet);
      const rooms: string[] = [];
      for (let i = 0; rooms.length < 5; i++) if ((await cluster.masterOf(registry.roomSetKey(`r${i}`))) !== principalMaster) rooms.push(`r${i}`);
      const leases = await Promise.all(rooms.map((roomKey) => registry.acquire({ principalKey: 'p1', roomKey })));
      expect(await admin.zcard(principalSet)).to.equal(5);
      // Past the lease: only renewals keep the slots.
      await new Promise((r) => setTimeout(r, 2500));
      expect(await admin.zcard(principalSet)).to.equal(5);
      for (const roomKey of rooms) expect(await admin.zcard(registry.roomSetKey(roomKey))).to.equal(1);
      await Promise.all(leases.map((l) => l.release()));
      expect(await admin.zcard(principalSet)).to.equal(0);
      for (const roomKey of rooms) expect(await admin.zcard(registry.roomSetKey(roomKey))).to.equal(0);
    } finally {
      await registry.close();
      admin.disconnect();
    }
  });

  it("frees a SIGKILLed holder's slots once its liveness key (in a slot of its own) lapses, without a cross-slot command", async () => {
    const keyPrefix = prefix('cap');
    const holder = startScript('hold-stream-leases.ts', [JSON.stringify(target), keyPrefix, 'p-dead', 'r-dead', '2', '30000']);
    const registry = new RedisStreamLeaseRegistry({ redis: target, keyPrefix, principalCap: 2, roomCap: 2, leaseMs: 30_000 });
    try {
      await firstJsonLine<{ ids: string[] }>(holder, 15_000);
      const refused = await registry.acquire({ principalKey: 'p-dead', roomKey: 'r-other' }).catch((err: unknown) => err);
      expect((refused as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');
      holder.kill('SIGKILL');
      const killedAt = Date.now();
      let freedAfter = -1;
      while (Date.now() - killedAt < 15_000) {
        const outcome = await registry.acquire({ principalKey: 'p-dead', roomKey: 'r-dead' }).catch((err: unknown) => err);
        if (!(outcome instanceof AppError)) {
          freedAfter = Date.now() - killedAt;
          break;
        }
        expect(outcome.code, outcome.message).to.be.oneOf(['STREAM_PRINCIPAL_LIMIT', 'STREAM_ROOM_LIMIT']);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(freedAfter, 'freed within the 5 s liveness, not the 30 s lease').to.be.within(0, 8_000);
    } finally {
      holder.kill('SIGKILL');
      await registry.close();
    }
  });
});
