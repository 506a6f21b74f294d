import { expect } from 'chai';
import type { StreamLease } from '@chat/stream-caps';
import { roomScopeKey, type RoomScope } from '@chat/store';
import { GatewayHarness, roomEventsPath, TARGETS, TEST_REDIS_URL, type TestRepository } from '../../test/gateway-harness.ts';
import { eventually, resourceCounts, retainedHeapBytes } from '../../test/leak-probe.ts';
import { backboneConnections } from '../../test/redis-client-list.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

// 10,000 streams in waves of 2,000 held at once, as the bench's leak scenario does: a wave's client
// and server sockets (4,000 descriptors) stay well under the 20,000 open-files cap; 10,000 at once
// would not.
const WAVES = 5;
const PER_WAVE = 2000;
const STREAMS = WAVES * PER_WAVE;
const ROOMS = 20;
const CONCURRENCY = 100;
const WARM_UP = 400;
/** The stream-cap key of the harness's `u_alice` (see `principalKey` in scope-grant.ts). */
const ALICE = 'user:u_alice';
/**
 * Heap still reachable after everything closed, over the baseline. Measured: 1–2 MiB (JIT code and
 * caches); 10,000 retained streams (a session, its output, Node's request, response and socket
 * each, several KiB) would be tens of MiB: the last wave's 2,000 test clients alone were 30.
 */
const RETAINED_HEAP_BOUND_MIB = 4;

const repoScope = (repository: TestRepository): RoomScope => ({ repositoryId: repository.id, branchId: null });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const target of TARGETS) {
  describe(`no leak over ${STREAMS.toLocaleString('en-US')} streams (${target})`, function () {
    this.timeout(180_000);
    // Both caps are exactly one wave's worth (one principal; PER_WAVE / ROOMS per room), so each wave
    // opens in full only if the one before released every lease it took.
    const h = new GatewayHarness({ target, repositories: ROOMS, poolSize: 4, caps: { principalCap: PER_WAVE, roomCap: PER_WAVE / ROOMS } });
    before(() => h.start());
    after(() => h.stop());

    it('returns streams, scopes, handles, timers, heap, leases and Redis connections to baseline after opening and closing every stream', async () => {
      const token = await h.token();
      const rooms = Array.from({ length: ROOMS }, () => h.repository());
      let perRoom = 0;
      const appendToEveryRoom = async () => {
        await Promise.all(rooms.map((room) => h.append(repoScope(room), `message ${perRoom + 1}`)));
        perRoom++;
      };
      await appendToEveryRoom();

      /** Opens `count` streams spread over the rooms; each has replayed its room before it counts as open. */
      const openWave = async (count: number): Promise<SseClient[]> => {
        const clients: SseClient[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < count) {
              const client = await openSse(h.url, roomEventsPath(rooms[next++ % ROOMS]!.id), token);
              clients.push(client);
              expect(client.response.status, JSON.stringify(client.response.body)).to.equal(200);
              await client.waitForMessages(perRoom, 10_000);
            }
          }),
        );
        return clients;
      };
      const closeWave = async (clients: SseClient[]) => {
        for (const client of clients) client.close();
        await eventually(() => h.gateway.hub.stats().sessions === 0, 'the gateway saw every stream close');
      };
      // The in-process target has no Redis; its list stays empty on both sides of the comparison.
      const redisConnections = async () => (target === 'postgres+redis' ? (await backboneConnections(h, TEST_REDIS_URL)).sort() : []);
      const snapshot = async () => ({ resources: resourceCounts(), heap: await retainedHeapBytes(), redis: await redisConnections() });

      // Warm-up at the same concurrency: the backbone subscription, the connection pools (a small pg
      // pool, so its idle timers stay at its size), the JWKS cache and the JIT reach their steady state.
      await closeWave(await openWave(WARM_UP));
      await sleep(500);
      const baseline = await snapshot();
      if (target === 'postgres+redis') {
        expect(baseline.redis, 'the backbone’s own connection and its one subscription (messages)').to.have.length(2);
      }

      /** One wave. Its clients live in this call's frame only, so after it the test holds none of them. */
      const runWave = async (wave: number) => {
        const clients = await openWave(PER_WAVE);
        // Live fanout too, so the backbone feed and the rooms' orderers carry events during the wave.
        await appendToEveryRoom();
        await Promise.all(clients.map((client) => client.waitForMessages(perRoom, 10_000)));
        expect(h.gateway.hub.stats()).to.include({ sessions: PER_WAVE, scopes: ROOMS, subscriptions: 1, ticking: true });
        // 2,000 open streams, and Redis still sees the same connections: no subscription per stream.
        expect(await redisConnections(), `Redis connections during wave ${wave + 1}`).to.deep.equal(baseline.redis);
        await closeWave(clients);
      };
      for (let wave = 0; wave < WAVES; wave++) await runWave(wave);

      // As before the baseline: lease releases go out on the next turn, sockets finish closing.
      await sleep(500);
      expect(h.gateway.hub.stats()).to.include({ sessions: 0, scopes: 0, subscriptions: 1, ticking: false });
      const after = await snapshot();
      const counts = `baseline ${JSON.stringify(baseline.resources)}, after ${JSON.stringify(after.resources)}`;
      expect(after.resources['Timeout'] ?? 0, `timers: ${counts}`).to.be.at.most(baseline.resources['Timeout'] ?? 0);
      expect(after.resources['TCPServerWrap'], `servers: ${counts}`).to.equal(baseline.resources['TCPServerWrap']);
      // Every other handle kind (sockets above all) at most as many, give or take the kept-alive
      // connections of the core client and the pools, which come and go by themselves.
      for (const [kind, count] of Object.entries(after.resources)) {
        expect(count, `${kind}: ${counts}`).to.be.at.most((baseline.resources[kind] ?? 0) + 2);
      }
      expect(after.redis, 'Redis connections of the backbone').to.deep.equal(baseline.redis);
      // Both heaps are read after full collections: only what is still reachable counts.
      const retainedMiB = (after.heap - baseline.heap) / 2 ** 20;
      expect(retainedMiB, 'heap retained over the baseline (MiB)').to.be.below(RETAINED_HEAP_BOUND_MIB);

      // The last wave's leases were released too: the whole principal cap can be taken again.
      const leases: StreamLease[] = [];
      for (let i = 0; i < PER_WAVE; i++) leases.push(await h.leases.acquire({ principalKey: ALICE, roomKey: roomScopeKey(repoScope(rooms[i % ROOMS]!)) }));
      await Promise.all(leases.map((lease) => lease.release()));
    });
  });
}
