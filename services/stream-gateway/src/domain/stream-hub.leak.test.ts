import { expect } from 'chai';
import { GatewayHarness, roomEventsPath, TARGETS } from '../test-support/gateway-harness.ts';
import { openSse } from '../test-support/sse-client.ts';

const STREAMS = 2000;
const CONCURRENCY = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Active handles by kind, without the sockets of kept-alive client pools (they come and go). */
function resourceCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

for (const target of TARGETS) {
  describe(`no leak over ${STREAMS} streams (${target})`, function () {
    this.timeout(180_000);
    const h = new GatewayHarness({ target, repositories: 10, poolSize: 4, caps: { principalCap: 1000, roomCap: 1000 } });
    before(() => h.start());
    after(() => h.stop());

    it('returns hub entries, timers, leases and handles to baseline after opening and closing every stream', async () => {
      const token = await h.token();
      const rooms = Array.from({ length: 10 }, () => h.repository());
      for (const room of rooms) await h.append({ repositoryId: room.id, branchId: null }, 'hello');
      const openAndClose = async (i: number) => {
        const client = await openSse(h.url, roomEventsPath(rooms[i % rooms.length]!.id), token);
        expect(client.response.status).to.equal(200);
        await client.waitForMessages(1);
        client.close();
      };
      const run = async (count: number) => {
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < count) await openAndClose(next++);
          }),
        );
        await sleep(500);
      };
      // Warm-up at the same concurrency: the backbone subscription, connection pools (a small pg pool, so
      // its idle timers stay at its size) and the JWKS cache reach their steady size here.
      await run(4 * CONCURRENCY);
      const baseline = resourceCounts();
      // Measured after a full collection (mocha runs with --expose-gc), so only what is retained counts.
      const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
      collect();
      const heapBefore = process.memoryUsage().heapUsed;

      await run(STREAMS);
      expect(h.gateway.hub.stats()).to.include({ sessions: 0, scopes: 0, ticking: false, subscriptions: 1 });

      // Every lease was released: the caps admit a full principal's worth again.
      const capCheck = await Promise.all(Array.from({ length: 20 }, () => openSse(h.url, roomEventsPath(rooms[0]!.id), token)));
      expect(capCheck.map((c) => c.response.status)).to.deep.equal(capCheck.map(() => 200));
      for (const c of capCheck) c.close();
      await sleep(500);

      const after = resourceCounts();
      expect(after['Timeout'] ?? 0, 'timers').to.be.at.most(baseline['Timeout'] ?? 0);
      expect(after['TCPSocketWrap'] ?? 0, 'sockets').to.be.at.most((baseline['TCPSocketWrap'] ?? 0) + 2);
      expect(after['TCPServerWrap']).to.equal(baseline['TCPServerWrap']);
      expect(h.gateway.hub.stats().sessions).to.equal(0);
      // Loose bound: 2,000 retained sessions with their responses would be far above this.
      collect();
      expect(process.memoryUsage().heapUsed - heapBefore).to.be.below(64 * 1024 * 1024);
    });
  });
}
