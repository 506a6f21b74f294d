import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { roomPath } from '../harness/api-client.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { writeMessages } from '../harness/gateway-writers.ts';
import { checkDeliveries, isClean, printReport, readRoomHistory, sumReports } from '../harness/sse-delivery-check.ts';
import { ResumingSseClient } from '../harness/sse-resuming-client.ts';
import { seededRandom } from '../harness/seeded-random.ts';
import { testConfig } from '../harness/test-config.ts';

const CLIENTS = 20;
const WRITERS = 4;
const MESSAGES = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('streams: gateway SIGKILL soak (reliability test 1)', function () {
  this.timeout(150_000);
  let cluster: GatewayCluster;
  const clients: ResumingSseClient[] = [];

  before(async () => {
    cluster = await startGatewayCluster({
      apis: 2,
      gateways: 2,
      gatewayEnv: { STREAM_CAP_PER_PRINCIPAL: '1000', GATEWAY_HEARTBEAT_MS: '1000' },
    });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await cluster?.stop();
  });

  it(`${CLIENTS} clients through 2 gateways (one SIGKILLed and restarted twice), ${WRITERS} writers × ${MESSAGES / WRITERS} through 2 APIs: every client gets exactly the ${MESSAGES} messages in list order`, async () => {
    const seed = testConfig.concurrencySeed;
    const random = seededRandom(seed);
    const context = `seed ${seed} (rerun with CONCURRENCY_SEED=${seed})`;
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const readerToken = await actors.reader();
    const writerTokens = [await actors.writer(), await actors.appendBot()];
    const gateways = cluster.gateways;

    for (let i = 0; i < CLIENTS; i += 1) {
      const client = new ResumingSseClient({
        pickBase: () => gateways[Math.floor(random() * gateways.length)]!.url,
        path: `${roomPath(scope)}/events`,
        token: readerToken,
        random,
        reconnectAfterMs: [300, 2500],
      });
      clients.push(client);
      client.start();
    }

    const victim = gateways[0]!;
    const kills: number[] = [];
    const t0 = Date.now();
    const writing = Promise.all(
      Array.from({ length: WRITERS }, (_, w) => writeMessages(cluster.apiClients, scope, writerTokens[w % 2]!, `writer ${w}`, MESSAGES / WRITERS, 0)),
    );
    const chaos = (async () => {
      for (let round = 0; round < 2; round += 1) {
        await sleep(round === 0 ? 500 + random() * 500 : 200 + random() * 300);
        await victim.kill();
        kills.push(Date.now() - t0);
        await sleep(200);
        await victim.start();
      }
    })();
    const [perWriter] = await Promise.all([writing, chaos]);
    const writeSeconds = (Date.now() - t0) / 1000;
    const acknowledged = perWriter.flat();
    expect(new Set(acknowledged.map((m) => m.messageId)).size).to.equal(MESSAGES);

    const history = await readRoomHistory(cluster.apiClients[0]!, scope, readerToken);
    expect(history.map((m) => m.messageId).sort(), 'the room holds exactly the acknowledged messages').to.deep.equal(acknowledged.map((m) => m.messageId).sort());

    // Delivery catches up within seconds once writing stops.
    const deadline = Date.now() + 30_000;
    const complete = (c: ResumingSseClient) => new Set(c.received.map((r) => (JSON.parse(r.data) as MessageResponse).messageId)).size >= MESSAGES;
    while (Date.now() < deadline && !clients.every(complete)) await sleep(200);
    await Promise.all(clients.map((c) => c.stop()));

    const reports = clients.map((c) => checkDeliveries(history, c.received));
    const total = sumReports(reports);
    const connections = clients.reduce((n, c) => n + c.connections, 0);
    const refusals = clients.flatMap((c) => [...c.refusals.entries()].map(([s, n]) => `${s}×${n}`));
    printReport('gateway soak', { ...total, connections, kills: kills.join('/'), writeSeconds, refusals: refusals.length });
    const fatal = clients.flatMap((c) => c.fatal);
    expect(fatal, `${context}: clients refused for good`).to.deep.equal([]);
    expect(
      { lost: total.lost, duplicated: total.duplicated, unexpected: total.unexpected, reordered: total.reordered, badIds: total.badIds },
      `${context}: ${JSON.stringify(reports.filter((r) => !isClean(r)).slice(0, 3))}`,
    ).to.deep.equal({ lost: 0, duplicated: 0, unexpected: 0, reordered: 0, badIds: 0 });
    expect(kills).to.have.length(2);
    // The run really exercised resumption: clients reconnected many times while writers were busy.
    expect(connections).to.be.greaterThan(CLIENTS * 3);
  });
});
