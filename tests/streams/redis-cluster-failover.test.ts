import { expectCleanDelivery, runDeliverySoak, useSoakCluster } from '../harness/delivery-soak.ts';
import { startRedisCluster, type RedisCluster } from '../harness/redis-cluster.ts';

const CLIENTS = 20;
const WRITERS = 4;
const MESSAGES = 1200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('streams: a Redis Cluster master SIGKILLed during a delivery soak, its replica taking over', function () {
  this.timeout(400_000);
  let redis: RedisCluster | undefined;
  before(async () => {
    redis = await startRedisCluster({ masters: 3, replicas: 1, nodeTimeoutMs: 1000 });
  });
  // The rate limiter fails closed, so appends whose sender's window lives on a dead master are
  // refused (503) until its replica takes over, and the writers retry them with the same key.
  const soak = useSoakCluster({ redisEnv: () => redis!.env(), apiEnv: { APPEND_RATE_FAILURE_MODE: 'closed' } });
  after(async () => {
    await redis?.stop();
  });

  it(`${CLIENTS} clients through 2 gateways, ${WRITERS} writers × ${MESSAGES / WRITERS} through 2 APIs on 3 masters + 3 replicas; the master of the room's partition is killed, then the one of the writers' rate windows: every client gets exactly the ${MESSAGES} messages in list order, appends retried with the same key land once`, async () => {
    const cluster = soak.cluster();
    const result = await runDeliverySoak(cluster, {
      title: 'redis cluster failover soak',
      clients: CLIENTS,
      writers: WRITERS,
      messages: MESSAGES,
      clientRegistry: soak.clients,
      async chaos() {
        const nodes = redis!;
        const t0 = Date.now();
        const originalMasters = await nodes.masterPorts();
        await sleep(1500);
        const [roomMaster] = await nodes.mastersHolding(`${cluster.keyPrefix}:{messages:*}:stream`);
        if (roomMaster === undefined) throw new Error("no master holds the room's stream");
        await nodes.kill(roomMaster);
        const killedAt = Date.now() - t0;
        await nodes.waitHealthy();
        const firstFailoverMs = Date.now() - t0 - killedAt;
        // The writers' rate windows: if another original master (one that still has a replica) holds
        // them, it goes too, so appends fail during a failover whatever slot their windows hashed to.
        const windowMasters = await nodes.mastersHolding(`${cluster.keyPrefix}:{rl:*}`);
        const second = windowMasters.find((port) => port !== roomMaster && originalMasters.includes(port));
        let secondFailoverMs: number | undefined;
        if (second !== undefined) {
          await sleep(500);
          const at = Date.now();
          await nodes.kill(second);
          await nodes.waitHealthy();
          secondFailoverMs = Date.now() - at;
        }
        return { killedAt, firstFailoverMs, secondFailoverMs: secondFailoverMs ?? 'same master' };
      },
    });
    // Appends refused while a window's master was down were retried with the same key until
    // acknowledged (result.failedAppends, in the report); runDeliverySoak has checked that the room
    // holds each acknowledged message exactly once.
    expectCleanDelivery(result, CLIENTS);
  });
});
