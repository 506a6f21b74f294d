import { expect } from 'chai';
import { useSoakCluster } from '../harness/delivery-soak.ts';
import { startRedisCluster, type RedisCluster } from '../harness/redis-cluster.ts';
import { FAILOVER_SOAK_API_ENV, runFailoverSoak } from '../harness/redis-failover-soak.ts';

const SCENARIOS = 3;
const CLIENTS_PER_ROOM = 3;

describe('streams: a Redis Cluster master SIGKILLed during a delivery soak, its replica taking over', function () {
  this.timeout(300_000);
  let redis: RedisCluster | undefined;
  before(async () => {
    redis = await startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 1000 });
  });
  const soak = useSoakCluster({ redisEnv: () => redis!.env(), apiEnv: FAILOVER_SOAK_API_ENV });
  after(async () => {
    await redis?.stop();
  });

  it(`${SCENARIOS * 2} rooms × ${CLIENTS_PER_ROOM} clients through 2 gateways, a writer per room through 2 APIs on 3 masters + 3 replicas; the master holding the most writers' rate windows is killed: appends refused (503) meanwhile land once on retry with the same key, every client gets its room's messages once in list order`, async () => {
    const nodes = redis!;
    const result = await runFailoverSoak(soak.cluster(), {
      title: 'redis cluster failover soak',
      scenarios: SCENARIOS,
      clientsPerRoom: CLIENTS_PER_ROOM,
      paceMs: 20,
      beforeFailoverMs: 1500,
      afterFailoverMs: 2000,
      clientRegistry: soak.clients,
      async failover({ senders, keyPrefix }) {
        // The writers' rate windows (hash tag `rl:<kind>:<id>`) by master: with more senders than
        // masters the chosen one holds at least one, so its writers' appends fail until the failover.
        const windows = new Map<number, number>();
        for (const sender of senders) {
          const port = await nodes.masterOf(`${keyPrefix}:{rl:${sender.kind}:${sender.id}}`);
          windows.set(port, (windows.get(port) ?? 0) + 1);
        }
        const streams = await nodes.keyCountsByMaster(`${keyPrefix}:{messages:*}:stream`);
        const score = (port: number) => (windows.get(port) ?? 0) * 1000 + (streams.get(port) ?? 0);
        const victim = [...windows.keys()].sort((a, b) => score(b) - score(a))[0]!;
        const at = Date.now();
        await nodes.kill(victim);
        await nodes.waitHealthy();
        return { victimRateWindows: windows.get(victim), victimRoomPartitions: streams.get(victim) ?? 0, failoverMs: Date.now() - at };
      },
    });
    expect(result.failover.victimRateWindows, 'the killed master held rate windows of writers').to.be.greaterThan(0);
  });
});
