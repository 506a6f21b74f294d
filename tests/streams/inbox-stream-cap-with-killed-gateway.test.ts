import { expect } from 'chai';
import { ApiClient } from '../harness/api-client.ts';
import { startGatewayCluster, type GatewayCluster, type RestartableService } from '../harness/gateway-cluster.ts';
import { printReport } from '../harness/sse-delivery-check.ts';
import { openSse, refusalAsApiResponse, type SseConnection } from '../harness/sse-stream.ts';

const INBOX_CAP = 4;
const ROOM_PRINCIPAL_CAP = 2;
const LEASE_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('streams: the per-principal inbox stream cap across gateways, a killed gateway\'s inbox slots free within the lease', function () {
  this.timeout(90_000);
  let cluster: GatewayCluster;
  const open: SseConnection[] = [];
  const validator = new ApiClient('http://127.0.0.1:1');

  before(async () => {
    cluster = await startGatewayCluster({
      apis: 0,
      gateways: 2,
      gatewayEnv: {
        STREAM_CAP_INBOX_PER_PRINCIPAL: String(INBOX_CAP),
        STREAM_CAP_PER_PRINCIPAL: String(ROOM_PRINCIPAL_CAP),
        STREAM_LEASE_MS: String(LEASE_MS),
      },
    });
  });
  after(async () => {
    for (const c of open) c.close();
    await cluster?.stop();
  });

  it(`holds ${INBOX_CAP} inbox streams per principal across two gateways with 503 STREAM_UNAVAILABLE and an integer Retry-After; a closed stream's slot is reused; SIGKILL frees the dead gateway's slots within STREAM_LEASE_MS`, async () => {
    const { scenario, actors } = await cluster.scenario();
    const path = `/v1/repositories/${scenario.repositoryId}/inbox/events`;
    const roomPath = `/v1/repositories/${scenario.repositoryId}/room/events`;
    const reader = await actors.reader();
    const [g0, g1] = cluster.gateways as [RestartableService, RestartableService];
    const stream = async (via: RestartableService, token: string, to = path) => {
      const c = await openSse(`${via.url}${to}`, token);
      if (c.status === 200) open.push(c);
      return c;
    };
    const expectRefused = (c: SseConnection) => {
      expect(c.status, c.errorBody).to.equal(503);
      const response = refusalAsApiResponse(c);
      expect(validator.problems({ method: 'GET', path }, response), 'contract').to.deep.equal([]);
      expect((response.body as { error: { code: string } }).error.code).to.equal('STREAM_UNAVAILABLE');
      expect(String(c.headers['retry-after'])).to.match(/^[1-9][0-9]*$/);
    };

    // Two slots on each gateway fill the cap; either gateway then refuses.
    for (const via of [g0, g0, g1, g1]) expect((await stream(via, reader)).status).to.equal(200);
    expectRefused(await stream(g0, reader));
    expectRefused(await stream(g1, reader));

    // Other principals' inbox streams and the reader's room streams are counted apart.
    expect((await stream(g0, await actors.writer())).status).to.equal(200);
    for (let i = 0; i < ROOM_PRINCIPAL_CAP; i += 1) expect((await stream(g1, reader, roomPath)).status).to.equal(200);

    // A stream closed on one gateway frees its slot for the other.
    const closing = open.find((c) => c.status === 200)!;
    open.splice(open.indexOf(closing), 1);
    closing.close();
    let reused: SseConnection | undefined;
    for (const deadline = Date.now() + 5000; !reused && Date.now() < deadline; ) {
      const c = await stream(g1, reader);
      if (c.status === 200) reused = c;
      else {
        expectRefused(c);
        await sleep(50);
      }
    }
    expect(reused, 'the freed slot').not.to.equal(undefined);
    expectRefused(await stream(g1, reader));

    // g0 now holds one of the reader's inbox slots (and the writer's): SIGKILL it, no release.
    await g0.kill();
    const killedAt = Date.now();
    let reopened = 0;
    let refusedMeanwhile = 0;
    while (reopened < 1 && Date.now() - killedAt < LEASE_MS * 3) {
      const c = await stream(g1, reader);
      if (c.status === 200) reopened += 1;
      else {
        expectRefused(c);
        refusedMeanwhile += 1;
        await sleep(100);
      }
    }
    const freedAfterMs = Date.now() - killedAt;
    printReport('inbox stream cap', { freedAfterMs, leaseMs: LEASE_MS, refusedMeanwhile });
    expect(reopened, 'the dead gateway\'s slot freed').to.equal(1);
    expect(freedAfterMs, 'within the lease (plus one renewal tick of slack)').to.be.at.most(LEASE_MS + 1500);
    // ... and the cap still holds afterwards, on the surviving gateway alone.
    expectRefused(await stream(g1, reader));
  });
});
