import { expect } from 'chai';
import { expectCleanDelivery, runDeliverySoak } from '../harness/delivery-soak.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import type { ResumingSseClient } from '../harness/sse-resuming-client.ts';

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
    const victim = cluster.gateways[0]!;
    const kills: number[] = [];
    const result = await runDeliverySoak(cluster, {
      title: 'gateway soak',
      clients: CLIENTS,
      writers: WRITERS,
      messages: MESSAGES,
      clientRegistry: clients,
      async chaos({ random }) {
        const t0 = Date.now();
        for (let round = 0; round < 2; round += 1) {
          await sleep(round === 0 ? 500 + random() * 500 : 200 + random() * 300);
          await victim.kill();
          kills.push(Date.now() - t0);
          await sleep(200);
          await victim.start();
        }
        return { kills: kills.join('/') };
      },
    });
    expectCleanDelivery(result, CLIENTS);
    expect(kills).to.have.length(2);
  });
});
