import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { expectStatus } from '../harness/assertions.ts';
import { expectCleanDelivery, runDeliverySoak, useSoakCluster } from '../harness/delivery-soak.ts';
import type { RestartableService } from '../harness/gateway-cluster.ts';

const CLIENTS = 20;
/** Clients that do not reconnect by themselves: only live delivery (publish, gap fill, relay) reaches them. */
const STEADY_CLIENTS = 4;
const WRITERS = 4;
const MESSAGES = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where each API process kills itself (tests/harness/api-with-crash-faults.ts): API 0 between commit and publish, API 1 between publish and response. */
const CRASH_POINTS = ['commit', 'publish'] as const;

/**
 * Starts `api` again whenever it has died, each time set to kill itself on a new random message
 * (the 100th to 249th it commits), until stopped; counts the deaths. The first start replaces
 * the cluster's plain process while writers are busy (a graceful restart, one more disruption).
 */
function restartOnCrash(api: RestartableService, point: (typeof CRASH_POINTS)[number], random: () => number) {
  let stopped = false;
  let crashes = 0;
  const crashSetting = () => `${point}:${100 + Math.floor(random() * 150)}`;
  const loop = (async () => {
    await api.stop();
    await api.startCrashingAfter(crashSetting());
    while (!stopped) {
      if (api.running) {
        await sleep(20);
        continue;
      }
      crashes += 1;
      await sleep(50 + random() * 250);
      await api.startCrashingAfter(crashSetting());
    }
  })();
  return {
    get crashes() {
      return crashes;
    },
    /** Stops restarting, and leaves the API running (without the crash switch) if it was down. */
    async stop(): Promise<void> {
      stopped = true;
      await loop;
      if (!api.running) await api.start();
    },
  };
}

describe('streams: API SIGKILL soak, between commit and publish and between publish and response (reliability tests 1 and 3)', function () {
  this.timeout(180_000);
  const soak = useSoakCluster();

  it(`${CLIENTS} clients through 2 gateways, ${WRITERS} writers × ${MESSAGES / WRITERS} through 2 APIs that SIGKILL themselves after a commit, again and again: every client gets exactly the ${MESSAGES} messages and a last one cut after its commit, in list order`, async () => {
    const cluster = soak.cluster();
    let crashes: number[] = [];
    const result = await runDeliverySoak(cluster, {
      title: 'api crash soak',
      clients: CLIENTS,
      steadyClients: STEADY_CLIENTS,
      writers: WRITERS,
      messages: MESSAGES,
      clientRegistry: soak.clients,
      async chaos({ random, writing }) {
        const supervisors = cluster.apis.map((api, i) => restartOnCrash(api, CRASH_POINTS[i]!, random));
        // Restarts go on until every append is acknowledged, so a relay is running when delivery is checked.
        await writing.catch(() => undefined);
        await Promise.all(supervisors.map((s) => s.stop()));
        crashes = supervisors.map((s) => s.crashes);
        return { crashesAfterCommit: crashes[0], crashesAfterPublish: crashes[1] };
      },
      // In a busy room a message cut before its publish also reaches streams through the gateways'
      // gap fill (the next message shows the gap). The room's last message has no next one: only
      // an outbox relay can deliver it.
      async afterWriting({ scope, token }) {
        const [victim, victimApi, survivorApi] = [cluster.apis[0]!, cluster.apiClients[0]!, cluster.apiClients[1]!];
        await victim.stop();
        await victim.startCrashingAfter('commit:1');
        const key = ulid();
        const body = { bodyMarkdown: 'the last message, cut after its commit' };
        const cut = await victimApi.append(scope, token, body, { key }).then((r) => `answered ${r.status}`, (err: Error) => err.message);
        expect(cut, 'the victim never answered the last append').to.not.match(/^answered/);
        await victim.exited(5000);
        const retry = await survivorApi.append<MessageResponse>(scope, token, body, { key });
        expectStatus(retry, 200);
        await victim.start();
        return [retry.body];
      },
    });
    expectCleanDelivery(result, CLIENTS);
    expect(crashes[0], 'API 0 died between commit and publish several times').to.be.at.least(2);
    expect(crashes[1], 'API 1 died between publish and response at least once').to.be.at.least(1);
  });
});
