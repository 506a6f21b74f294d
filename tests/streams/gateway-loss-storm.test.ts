import { expect } from 'chai';
import { ChatClient, type ChatEventStream, type StreamStatus } from '@chat/client';
import { startGatewayCluster, type GatewayCluster, type RestartableService } from '../harness/gateway-cluster.ts';
import { seededRandom } from '../harness/seeded-random.ts';
import { printReport } from '../harness/sse-delivery-check.ts';
import { RoundRobinProxy } from './round-robin-proxy.ts';

/** Streaming clients, all of one principal, whose cap they fill exactly. */
const CLIENTS = 60;
const OPENS_PER_SECOND = 10;
const OPEN_BURST = 10;
/**
 * The SDK's first reconnect step here: its full jitter spreads the first reconnects over [0, 1 s].
 * The steps stop at 2 s, so a client refused 429 before the dead holder was known dead is back
 * well inside the dead leases' 30 s however the machine is loaded.
 */
const BASE_DELAY_MS = 1000;
/** The registry's default liveness-key life: a dead gateway's slots free within it. */
const HOLDER_TTL_MS = 5000;
/** The gateways' default lease: without the liveness keys, the dead gateway's slots would hold this long. */
const LEASE_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Seen extends StreamStatus {
  at: number;
}

async function metric(gateway: RestartableService, name: string): Promise<number> {
  const text = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

async function waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('streams: a gateway SIGKILLed under load behind a balancer: the open rate holds, reconnects spread, the dead pod\'s slots free within seconds', function () {
  this.timeout(120_000);
  let cluster: GatewayCluster;
  let proxy: RoundRobinProxy;
  const streams: Array<ChatEventStream<{ type: string; id: string }>> = [];
  const runs: Array<Promise<unknown>> = [];

  before(async () => {
    cluster = await startGatewayCluster({
      apis: 1,
      gateways: 2,
      gatewayEnv: {
        STREAM_CAP_PER_PRINCIPAL: String(CLIENTS),
        GATEWAY_STREAM_OPENS_PER_SECOND: String(OPENS_PER_SECOND),
        GATEWAY_STREAM_OPEN_BURST: String(OPEN_BURST),
        STREAM_LEASE_MS: String(LEASE_MS),
      },
    });
    proxy = new RoundRobinProxy(cluster.gateways.map((g) => ({ host: '127.0.0.1', port: g.port })));
  });
  after(async () => {
    for (const s of streams) s.close();
    await Promise.allSettled(runs);
    await proxy?.close();
    await cluster?.stop();
  });

  it(`${CLIENTS} SDK clients of one principal through 2 gateways (${OPENS_PER_SECOND} opens/s each), one SIGKILLed`, async () => {
    const { scenario, actors } = await cluster.scenario();
    const token = await actors.reader();
    const url = await proxy.start();
    const [victim, survivor] = cluster.gateways as [RestartableService, RestartableService];
    const seen: Seen[][] = Array.from({ length: CLIENTS }, () => []);
    for (let i = 0; i < CLIENTS; i += 1) {
      const client = new ChatClient({ baseUrl: url, token });
      const stream = client.streamRoom(
        { repositoryId: scenario.repositoryId },
        { backoff: { baseDelayMs: BASE_DELAY_MS, maxDelayMs: 2 * BASE_DELAY_MS, random: seededRandom(1000 + i) }, onStatus: (s) => seen[i]!.push({ ...s, at: Date.now() }) },
      );
      streams.push(stream);
      runs.push(stream.run(() => undefined).catch((err: unknown) => err));
    }
    const isOpen = (i: number) => seen[i]!.at(-1)?.state === 'open';
    // The first opens meet the rate too (2 × 10 a second, after the bursts): a few seconds.
    await waitFor('every client open', () => seen.every((_, i) => isOpen(i)), 40_000);
    await sleep(500);

    const openedBefore = await metric(survivor, 'chat_gateway_streams_opened_total');
    const throttledBefore = await metric(survivor, 'chat_gateway_stream_opens_throttled_total');
    await victim.kill();
    const killedAt = Date.now();

    // The clients whose stream the kill cut.
    await sleep(1000);
    const cut = seen.map((statuses, i) => ({ i, loss: statuses.find((s) => s.at >= killedAt - 50 && s.state === 'backoff') })).filter((c) => c.loss !== undefined);
    expect(cut.length, 'clients on the killed gateway').to.be.at.least(CLIENTS / 4);
    await waitFor('every client open again', () => seen.every((_, i) => isOpen(i)), LEASE_MS);
    const recoveredAt = Math.max(...cut.map(({ i }) => seen[i]!.at(-1)!.at));
    const openedAfter = await metric(survivor, 'chat_gateway_streams_opened_total');
    const throttledAfter = await metric(survivor, 'chat_gateway_stream_opens_throttled_total');
    const afterKill = seen.flatMap((statuses) => statuses.filter((s) => s.at > killedAt));

    // Jitter: each cut client's first reconnect waited a delay of its own, drawn over the whole
    // first step, so the crowd reached the survivor spread out, not at one instant.
    const firstTries = cut.map(({ i, loss }) => seen[i]!.find((s) => s.at >= loss!.at && s.state === 'connecting')!.at - killedAt).sort((a, b) => a - b);
    const delays = cut.map(({ loss }) => loss!.delayMs!);
    const spreadMs = firstTries.at(-1)! - firstTries[0]!;
    let crowdedest = 0;
    for (let a = 0, b = 0; b < firstTries.length; b += 1) {
      while (firstTries[b]! - firstTries[a]! > 50) a += 1;
      crowdedest = Math.max(crowdedest, b - a + 1);
    }

    // The rate: refusals with Retry-After, and never more opens than the bucket allows.
    const refusedByRate = afterKill.filter((s) => s.reason === 'http_503');
    const refusedByCap = afterKill.filter((s) => s.reason === 'http_429');
    const windowSeconds = (Date.now() - killedAt) / 1000 + 1;
    const opened = openedAfter - openedBefore;
    const lastCapRefusalMs = refusedByCap.length === 0 ? 0 : Math.max(...refusedByCap.map((s) => s.at)) - killedAt;

    printReport('gateway loss storm', {
      cut: cut.length,
      recoveredAfterMs: recoveredAt - killedAt,
      firstTriesMs: `${firstTries[0]}..${firstTries.at(-1)}`,
      crowdedest50ms: crowdedest,
      refusedByRate: refusedByRate.length,
      throttled: throttledAfter - throttledBefore,
      refusedByCap: refusedByCap.length,
      lastCapRefusalMs,
      openedOnSurvivor: opened,
      windowSeconds: Math.round(windowSeconds),
    });

    expect(new Set(delays).size, 'first reconnect delays of their own').to.be.at.least(cut.length * 0.8);
    expect(Math.min(...delays)).to.be.below(BASE_DELAY_MS / 4);
    expect(Math.max(...delays)).to.be.above((BASE_DELAY_MS * 3) / 4);
    expect(spreadMs, 'first reconnects spread over the step').to.be.above(BASE_DELAY_MS / 2);
    expect(crowdedest, 'most first reconnects in any 50 ms').to.be.at.most(Math.ceil(cut.length / 3));

    expect(throttledAfter - throttledBefore, 'opens the survivor refused at its rate').to.be.above(0);
    expect(refusedByRate.length, 'clients refused at the rate').to.be.above(0);
    for (const s of refusedByRate) {
      expect((s.error as { code?: string }).code).to.equal('STREAM_UNAVAILABLE');
      expect((s.error as { retryAfter?: number }).retryAfter).to.be.at.least(1);
      expect(s.delayMs).to.be.at.least((s.error as { retryAfter: number }).retryAfter * 1000);
    }
    expect(opened, 'opens on the survivor within its bucket').to.be.at.most(OPEN_BURST + OPENS_PER_SECOND * windowSeconds);
    expect(opened, 'every cut client reopened on the survivor').to.be.at.least(cut.length);

    // The dead gateway's slots: refused 429 only until its liveness key lapsed, a few times per client
    // at most, and everyone back long before its leases would have expired.
    expect(lastCapRefusalMs, 'no 429 once the dead holder is known dead').to.be.at.most(HOLDER_TTL_MS + 4000);
    expect(refusedByCap.length, 'no 429 storm').to.be.at.most(cut.length * 2);
    expect(recoveredAt - killedAt, 'back before the dead leases expire').to.be.below(LEASE_MS - 5000);
  });
});
