import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { roomPath, type RoomScope } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { checkDeliveries, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import { ResumingSseClient } from '../harness/sse-resuming-client.ts';
import { seededRandom } from '../harness/seeded-random.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CRASH_AT = 4;

/** Waits until the client holds `messageId`, returning how long it took, or fails after `timeoutMs`. */
async function waitForMessage(client: ResumingSseClient, messageId: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!client.received.some((r) => (JSON.parse(r.data) as MessageResponse).messageId === messageId)) {
    if (Date.now() - started > timeoutMs) throw new Error(`message ${messageId} not delivered within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Date.now() - started;
}

describe('streams: API SIGKILLed between commit and publish, and between publish and response (reliability test 3)', function () {
  this.timeout(120_000);
  let cluster: GatewayCluster;
  const clients: ResumingSseClient[] = [];

  before(async () => {
    cluster = await startGatewayCluster({ apis: 2, gateways: 1 });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await cluster?.stop();
  });

  for (const point of ['commit', 'publish'] as const) {
    it(`crash after ${point} of message ${CRASH_AT}: the cut append's retry on the other API returns the original with 200, and the stream delivers every committed message exactly once`, async () => {
      const victim = cluster.apis[0]!;
      const [victimApi, survivorApi] = [cluster.apiClients[0]!, cluster.apiClients[1]!];
      await victim.stop();
      await victim.startCrashingAfter(`${point}:${CRASH_AT}`);
      const { scenario, actors } = await cluster.scenario();
      const scope: RoomScope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const writer = await actors.writer();
      const client = new ResumingSseClient({ pickBase: () => cluster.gateways[0]!.url, path: `${roomPath(scope)}/events`, token: await actors.reader(), random: seededRandom(7) });
      clients.push(client);
      client.start();

      const acknowledged: MessageResponse[] = [];
      for (let i = 1; i < CRASH_AT; i += 1) {
        const answer = await victimApi.append<MessageResponse>(scope, writer, { bodyMarkdown: `before the crash ${i}` });
        expectStatus(answer, 201);
        acknowledged.push(answer.body);
      }
      // The crashing append: committed, then the process dies (before publish, or before the response).
      const key = ulid();
      const body = { bodyMarkdown: `cut by a crash after ${point}` };
      const cut = await victimApi.append<MessageResponse>(scope, writer, body, { key }).then(
        (r) => `answered ${r.status}`,
        (err: Error) => err.message,
      );
      expect(cut, 'the victim never answered the crashing append').to.not.match(/^answered/);
      await victim.exited(5000);

      const retry = await survivorApi.append<MessageResponse>(scope, writer, body, { key });
      expectStatus(retry, 200);
      expect(retry.body.bodyMarkdown).to.equal(body.bodyMarkdown);
      acknowledged.push(retry.body);
      // Nothing else is appended, so only the surviving API's outbox relay (or the victim's own publish) can deliver it.
      const deliveredAfterMs = await waitForMessage(client, retry.body.messageId, 10_000);

      // Time for a repeat publication by the relay (publish mode leaves the outbox entry when the crash beats its delete).
      await sleep(point === 'publish' ? 3500 : 0);
      for (let i = 1; i <= 3; i += 1) {
        const answer = await survivorApi.append<MessageResponse>(scope, writer, { bodyMarkdown: `after the crash ${i}` });
        expectStatus(answer, 201);
        acknowledged.push(answer.body);
      }
      await waitForMessage(client, acknowledged.at(-1)!.messageId, 10_000);
      await sleep(300);
      await client.stop();

      const history = await readRoomHistory(survivorApi, scope, writer);
      expect(history.map((m) => m.messageId), 'the room holds the acknowledged messages, in order').to.deep.equal(acknowledged.map((m) => m.messageId));
      const report = checkDeliveries(history, client.received);
      printReport(`api crash after ${point}`, { ...report, samples: report.samples.length, deliveredAfterMs });
      expect({ lost: report.lost, duplicated: report.duplicated, replayed: report.replayed, unexpected: report.unexpected, reordered: report.reordered, badIds: report.badIds }, report.samples.join('; ')).to.deep.equal({
        lost: 0,
        duplicated: 0,
        replayed: 0,
        unexpected: 0,
        reordered: 0,
        badIds: 0,
      });
      expect(deliveredAfterMs, 'the cut message reaches streams within seconds').to.be.below(6000);
      await victim.start();
    });
  }
});
