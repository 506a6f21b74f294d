import { expect } from 'chai';
import { expectCleanDelivery, runDeliverySoak, useSoakCluster } from '../harness/delivery-soak.ts';

const CLIENTS = 20;
const WRITERS = 4;
const MESSAGES = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('streams: gateway SIGKILL soak (reliability test 1)', function () {
  this.timeout(150_000);
  const soak = useSoakCluster();

  it(`${CLIENTS} clients through 2 gateways (one SIGKILLed and restarted twice), ${WRITERS} writers × ${MESSAGES / WRITERS} through 2 APIs: every client gets exactly the ${MESSAGES} messages in list order`, async () => {
    const cluster = soak.cluster();
    const victim = cluster.gateways[0]!;
    const kills: number[] = [];
    const result = await runDeliverySoak(cluster, {
      title: 'gateway soak',
      clients: CLIENTS,
      writers: WRITERS,
      messages: MESSAGES,
      clientRegistry: soak.clients,
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
