import { expect } from 'chai';
import type { RoomScope } from '@chat/store';
import { GatewayHarness, roomEventsPath, TARGETS } from '../test/gateway-harness.ts';
import { openSse, type SseClient } from '../test/sse-client.ts';

/** A histogram's samples as `series{labels}` → value (`le` included), from the registry's text. */
async function samplesOf(h: GatewayHarness, name: string): Promise<Map<string, number>> {
  const text = await h.gateway.metrics.registry.getSingleMetricAsString(name);
  return new Map(
    text
      .split('\n')
      .filter((line) => line.startsWith(name))
      .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))]),
  );
}

for (const target of TARGETS) {
  describe(`gateway delivery metrics (${target})`, function () {
    this.timeout(60_000);
    const h = new GatewayHarness({ target, repositories: 4, poolSize: 6 });
    before(() => h.start());
    after(() => h.stop());

    it("samples commit-to-client latency once per event and gateway, not per stream, and the backbone's lag", async () => {
      const room = h.repository();
      const scope: RoomScope = { repositoryId: room.id, branchId: null };
      const token = await h.token();
      const clients: SseClient[] = [];
      for (let i = 0; i < 3; i++) clients.push(await openSse(h.url, roomEventsPath(room.id), token));
      for (let i = 1; i <= 4; i++) await h.append(scope, `message ${i}`);
      await Promise.all(clients.map((c) => c.waitForMessages(4, 10_000)));
      for (const c of clients) c.close();

      const latency = await samplesOf(h, 'chat_gateway_delivery_latency_seconds');
      // Four events to a scope of three streams: four samples, each well within the objective.
      expect(latency.get('chat_gateway_delivery_latency_seconds_count{kind="message"}')).to.equal(4);
      expect(latency.get('chat_gateway_delivery_latency_seconds_bucket{le="1",kind="message"}')).to.equal(4);
      expect(latency.get('chat_gateway_delivery_latency_seconds_sum{kind="message"}')).to.be.below(4);

      const lag = await samplesOf(h, 'chat_gateway_backbone_lag_seconds');
      expect(lag.get('chat_gateway_backbone_lag_seconds_count{channel="messages"}')).to.be.at.least(4);
      expect(lag.get('chat_gateway_backbone_lag_seconds_bucket{le="0.5",channel="messages"}')).to.equal(lag.get('chat_gateway_backbone_lag_seconds_count{channel="messages"}'));
    });

    it("reports the database pool's size and occupancy (PostgreSQL only; the embedded database has no pool)", async () => {
      const text = await h.gateway.metrics.registry.metrics();
      if (target === 'postgres+redis') {
        expect(text).to.include('chat_db_pool_max_connections 6');
        expect(text).to.match(/chat_db_pool_connections\{state="in_use"\} \d+/);
        expect(text).to.match(/chat_db_pool_connections\{state="idle"\} [1-6]/);
        expect(text).to.include('chat_db_pool_waiting_requests 0');
      } else {
        expect(text).to.include('chat_db_pool_max_connections 0');
      }
    });
  });
}
