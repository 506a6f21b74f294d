import { expect } from 'chai';
import { startRedisCluster } from '../harness/redis-cluster.ts';
import { runFailoverSoak, useFailoverSoak } from '../harness/redis-failover-soak.ts';

const SCENARIOS = 3;
const CLIENTS_PER_ROOM = 3;

describe('streams: a Redis Cluster master SIGKILLed during a delivery soak, its replica taking over', function () {
  this.timeout(300_000);
  const soak = useFailoverSoak(() => startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 1000 }));

  it(`${SCENARIOS * 2} rooms × ${CLIENTS_PER_ROOM} clients through 2 gateways, a writer per room through 2 APIs on 3 masters + 3 replicas; the master holding the most writers' rate windows is killed: appends refused (503) meanwhile land once on retry with the same key, every client gets its room's messages once in list order`, async () => {
    const nodes = soak.redis();
    const result = await runFailoverSoak(soak, {
      title: 'redis cluster failover soak',
      scenarios: SCENARIOS,
      clientsPerRoom: CLIENTS_PER_ROOM,
      async failover({ senders, keyPrefix }) {
        // The writers' rate windows (hash tag `rl:<kind>:<id>`) by master: the victim is one of the
        // masters holding some, so its writers' appends fail until its replica takes over.
        const windows = new Map<number, number>();
        for (const sender of senders) {
          const port = await nodes.masterOf(`${keyPrefix}:{rl:${sender.kind}:${sender.id}}`);
          windows.set(port, (windows.get(port) ?? 0) + 1);
        }
        const streams = await nodes.keyCountsByMaster(`${keyPrefix}:{messages:*}:stream`);
        // Preferably one that also holds room partitions, so publishing fails there too and the
        // outbox relay and the gateways' re-sync are exercised with the refused appends.
        const rank = (port: number) => [Math.min(1, streams.get(port) ?? 0), windows.get(port) ?? 0, streams.get(port) ?? 0];
        const before = (a: number, b: number) => rank(b).map((v, i) => v - rank(a)[i]!).find((d) => d !== 0) ?? 0;
        const victim = [...windows.keys()].sort(before)[0]!;
        const at = Date.now();
        await nodes.kill(victim);
        await nodes.waitHealthy();
        return { victimRateWindows: windows.get(victim), victimRoomPartitions: streams.get(victim) ?? 0, failoverMs: Date.now() - at };
      },
    });
    expect(result.failover.victimRateWindows, 'the killed master held rate windows of writers').to.be.greaterThan(0);
  });
});
