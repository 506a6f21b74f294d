import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { roomPath } from '../harness/api-client.ts';
import { readMetric, residentBytes, startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { checkDeliveries, expectClean, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import { ResumingSseClient, type ReceivedMessage } from '../harness/sse-resuming-client.ts';
import { seededRandom } from '../harness/seeded-random.ts';
import { openSse, type SseConnection } from '../harness/sse-stream.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MAX_EVENTS = 100;
const MAX_BYTES = 262_144;
const MAX_MESSAGES = 1500;
/** A body near the 16 KiB maximum, so the socket buffers fill after a few hundred events. */
const bigBody = (label: string) => `${label}\n\n${'lorem ipsum dolor sit amet '.repeat(560)}`;

describe('streams: a slow consumer on a busy room (reliability test 16)', function () {
  this.timeout(120_000);
  let cluster: GatewayCluster;
  const connections: SseConnection[] = [];
  const healthyClients: ResumingSseClient[] = [];

  before(async () => {
    cluster = await startGatewayCluster({
      apis: 1,
      gateways: 1,
      gatewayEnv: { GATEWAY_QUEUE_MAX_EVENTS: String(MAX_EVENTS), GATEWAY_QUEUE_MAX_BYTES: String(MAX_BYTES) },
    });
  });
  after(async () => {
    for (const c of connections) c.close();
    await Promise.all(healthyClients.map((c) => c.stop()));
    await cluster?.stop();
  });

  it('a client that stops reading is closed by the gateway (memory stays bounded, a reading client is unaffected), then resumes with its last id and gets everything', async () => {
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const writer = await actors.writer();
    const reader = await actors.reader();
    const gateway = cluster.gateways[0]!;
    const url = `${gateway.url}${roomPath(scope)}/events`;
    const pid = gateway.pid!;
    const closedBefore = await readMetric(gateway, 'chat_gateway_streams_closed_total', { reason: 'slow_consumer' });

    const first = await cluster.apiClients[0]!.append<MessageResponse>(scope, writer, { bodyMarkdown: bigBody('first') });
    expect(first.status, first.text).to.equal(201);
    const slow = await openSse(url, reader, { highWaterMark: 1024 });
    connections.push(slow);
    expect(slow.status, slow.errorBody).to.equal(200);
    while (!slow.events.some((e) => e.event === 'message')) await sleep(10);
    slow.pause();
    // A reader that keeps reading on the same room (resuming if it is ever cut too), to show the slow one holds nobody back.
    const healthy = new ResumingSseClient({ pickBase: () => gateway.url, path: `${roomPath(scope)}/events`, token: reader, random: seededRandom(5) });
    healthyClients.push(healthy);
    healthy.start();

    const baselineRss = await residentBytes(pid);
    let peakRss = baselineRss;
    let closedBySlowness = false;
    let appended = 1;
    const sampler = setInterval(() => {
      void residentBytes(pid).then((rss) => (peakRss = Math.max(peakRss, rss)), () => undefined);
      void readMetric(gateway, 'chat_gateway_streams_closed_total', { reason: 'slow_consumer' }).then((n) => (closedBySlowness ||= n > closedBefore), () => undefined);
    }, 200);
    try {
      await Promise.all(
        Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; !closedBySlowness && appended < MAX_MESSAGES; i += 1) {
            appended += 1;
            const answer = await cluster.apiClients[0]!.append<MessageResponse>(scope, writer, { bodyMarkdown: bigBody(`writer ${w} #${i}`) }, { key: ulid() });
            expect(answer.status, answer.text).to.equal(201);
          }
        }),
      );
      // A few more after the close, which the slow client must also get on resume.
      for (let i = 0; i < 20; i += 1) {
        const answer = await cluster.apiClients[0]!.append<MessageResponse>(scope, writer, { bodyMarkdown: `after the close ${i}` });
        expect(answer.status, answer.text).to.equal(201);
      }
    } finally {
      clearInterval(sampler);
    }
    expect(closedBySlowness, `the gateway closed the paused stream (after ${appended} appends)`).to.equal(true);

    // Resume reading: the client drains what its socket holds, sees the stream end, and reconnects with its last id.
    slow.resume();
    const end = await slow.done;
    const received: ReceivedMessage[] = slow.events.filter((e) => e.event === 'message').map((e) => ({ id: e.id!, data: e.data, connection: 1 }));
    const lastId = received.at(-1)!.id;
    const history = await readRoomHistory(cluster.apiClients[0]!, scope, reader);
    const resumed = await openSse(url, reader, { headers: { 'last-event-id': lastId } });
    connections.push(resumed);
    expect(resumed.status, resumed.errorBody).to.equal(200);
    const deadline = Date.now() + 20_000;
    while (resumed.events.filter((e) => e.event === 'message').length + received.length < history.length && Date.now() < deadline) await sleep(50);
    resumed.close();
    while (new Set(healthy.received.map((r) => r.id)).size < history.length && Date.now() < deadline) await sleep(50);
    await healthy.stop();
    received.push(...resumed.events.filter((e) => e.event === 'message').map((e) => ({ id: e.id!, data: e.data, connection: 2 })));

    const report = checkDeliveries(history, received);
    const healthyReport = checkDeliveries(history, healthy.received);
    const growthMiB = (peakRss - baselineRss) / 2 ** 20;
    printReport('slow consumer', {
      appended: history.length,
      beforeClose: received.filter((r) => r.connection === 1).length,
      end,
      lost: report.lost,
      duplicated: report.duplicated,
      replayed: report.replayed,
      unexpected: report.unexpected,
      reordered: report.reordered,
      healthyLost: healthyReport.lost,
      healthyConnections: healthy.connections,
      rssBaselineMiB: (baselineRss / 2 ** 20).toFixed(1),
      rssGrowthMiB: growthMiB.toFixed(1),
    });
    expectClean(report);
    expect(received.filter((r) => r.connection === 1).length, 'the slow client was cut before the end').to.be.below(history.length);
    expect(healthyReport.lost + healthyReport.duplicated + healthyReport.reordered, 'the healthy reader got everything').to.equal(0);
    // Bounded: the slow stream's backlog is capped at GATEWAY_QUEUE_MAX_BYTES (256 KiB) in the process,
    // whatever was appended (many MiB); the rest is transient work of the busy room.
    expect(growthMiB, 'gateway RSS growth (MiB) while one client did not read').to.be.below(96);
  });
});
