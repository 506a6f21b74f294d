import { expect } from 'chai';
import { runFailoverSoak, useFailoverSoak } from '../harness/redis-failover-soak.ts';
import { RedisSentinel } from '../harness/redis-sentinel.ts';

const SCENARIOS = 2;
const CLIENTS_PER_ROOM = 4;

describe('streams: the Redis primary SIGKILLed during a delivery soak, Sentinel promoting its replica', function () {
  this.timeout(300_000);
  const soak = useFailoverSoak(() => RedisSentinel.start({ replicas: 1, sentinels: 3, downAfterMs: 1000 }));

  it(`${SCENARIOS * 2} rooms × ${CLIENTS_PER_ROOM} clients through 2 gateways, a writer per room through 2 APIs on a primary, a replica and 3 sentinels; the primary is killed: appends go on (they do not use Redis), publishes that fail meanwhile are left to the outbox relay until the services follow the promoted replica, every client gets its room's messages once in list order`, async () => {
    const sentinel = soak.redis();
    const result = await runFailoverSoak(soak, {
      title: 'redis sentinel failover soak',
      scenarios: SCENARIOS,
      clientsPerRoom: CLIENTS_PER_ROOM,
      async failover() {
        const at = Date.now();
        const killed = await sentinel.killPrimary();
        const promoted = await sentinel.waitPromoted();
        return { killedPrimary: killed, promotedReplica: promoted, promotionMs: Date.now() - at };
      },
    });
    expect(result.failover.promotedReplica, 'a replica other than the killed primary serves').to.not.equal(result.failover.killedPrimary);
  });
});
