import { expect } from 'chai';
import { startRedisCluster } from '../harness/redis-cluster.ts';
import { runFailoverSoak, useFailoverSoak } from '../harness/redis-failover-soak.ts';

const SCENARIOS = 3;
const CLIENTS_PER_ROOM = 3;

describe('streams: a Redis Cluster master SIGKILLed during a delivery soak, its replica taking over', function () {
  this.timeout(300_000);
  const soak = useFailoverSoak(() => startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 1000 }));

  it(`${SCENARIOS * 2} rooms × ${CLIENTS_PER_ROOM} clients through 2 gateways, a writer per room through 2 APIs on 3 masters + 3 replicas; the master holding the most room partitions is killed: appends go on (they do not use Redis), publishes that fail there are left to the outbox relay, every client gets its room's messages once in list order`, async () => {
    const nodes = soak.redis();
    const result = await runFailoverSoak(soak, {
      title: 'redis cluster failover soak',
      scenarios: SCENARIOS,
      clientsPerRoom: CLIENTS_PER_ROOM,
      async failover({ keyPrefix }) {
        // The master holding the most room partitions: publishes to them fail until its replica
        // takes over, which the outbox relay and the gateways' re-sync have to make good.
        const streams = await nodes.keyCountsByMaster(`${keyPrefix}:{messages:*}:stream`);
        const victim = [...streams.keys()].sort((a, b) => streams.get(b)! - streams.get(a)!)[0]!;
        const at = Date.now();
        await nodes.kill(victim);
        await nodes.waitHealthy();
        return { victimRoomPartitions: streams.get(victim) ?? 0, failoverMs: Date.now() - at };
      },
    });
    expect(result.failover.victimRoomPartitions, 'the killed master held room partitions').to.be.greaterThan(0);
  });
});
