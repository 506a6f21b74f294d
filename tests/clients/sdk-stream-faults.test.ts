import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { chromium, type Browser, type Page } from 'playwright-core';
import { roomPath, type RoomScope } from '../harness/api-client.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { writeMessages } from '../harness/gateway-writers.ts';
import { checkDeliveries, expectClean, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import type { ReceivedMessage } from '../harness/sse-resuming-client.ts';
import { SdkBrowserOrigin, browserDriver } from './sdk-browser-origin.ts';
import { nodeDriver, type ConsumerDriver, type ConsumerRun, type RunningConsumer } from './stream-consumer-drivers.ts';

const HEARTBEAT_MS = 500;
const GATEWAY_ENV = {
  GATEWAY_HEARTBEAT_MS: String(HEARTBEAT_MS),
  GATEWAY_MAX_STREAM_AGE_MS: '2500',
  GATEWAY_RECHECK_MS: '300',
  STREAM_CAP_PER_PRINCIPAL: '1',
  STREAM_LEASE_MS: '2000',
};
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the consumer until `done(run)` or the deadline; returns the last state either way. */
async function until(consumer: RunningConsumer, done: (run: ConsumerRun) => boolean, timeoutMs = 45_000): Promise<ConsumerRun> {
  const deadline = Date.now() + timeoutMs;
  let run = await consumer.state();
  while (!done(run) && Date.now() < deadline) {
    await sleep(150);
    run = await consumer.state();
  }
  return run;
}

const distinct = (run: ConsumerRun) => new Set(run.received.map((r) => r.id)).size;
const reasons = (run: ConsumerRun, reason: string) => run.statuses.filter((s) => s.reason === reason);

/** Checks what the handler saw against the room's history: nothing lost, duplicated or reordered, and no replay reached the handler. */
function expectExactlyOnce(title: string, history: MessageResponse[], received: ReceivedMessage[], extra: object = {}): void {
  const report = checkDeliveries(history, received);
  printReport(title, { ...report, samples: report.samples.length, ...extra });
  expectClean(report, title);
  expect(report.replayed, 'the SDK drops the replay of the last processed event (rule 7)').to.equal(0);
  expect(report.delivered).to.equal(history.length);
}

describe('clients: the SDK stream consumer against real gateways that are killed, paused, rotated, cut from core and capped', function () {
  this.timeout(240_000);
  let cluster: GatewayCluster;

  before(async function () {
    this.timeout(120_000);
    cluster = await startGatewayCluster({ apis: 1, gateways: 1, gatewayEnv: GATEWAY_ENV });
  });
  after(async () => {
    await cluster?.stop();
  });

  async function room(): Promise<{ scope: RoomScope; writer: string; reader: string; removeReader(): Promise<void> }> {
    const { scenario, actors } = await cluster.scenario();
    return {
      scope: { repositoryId: scenario.repositoryId },
      writer: await actors.writer(),
      reader: await actors.reader(),
      removeReader: () => cluster.fixture.updateRepository(scenario.repositoryId, (r) => void delete r.members[scenario.users.reader]),
    };
  }

  for (const where of ['node', 'chromium'] as const) {
    describe(`in ${where === 'node' ? 'Node' : "Debian's Chromium (playwright-core), on the SDK's dist modules"}`, () => {
      let driver: ConsumerDriver;
      let baseUrl: string;
      let browser: Browser | undefined;
      let origin: SdkBrowserOrigin | undefined;
      let page: Page | undefined;
      const requestedUrls: string[] = [];
      const pageErrors: string[] = [];

      before(async function () {
        this.timeout(60_000);
        if (where === 'node') {
          driver = nodeDriver;
          baseUrl = cluster.gateways[0]!.url;
          return;
        }
        origin = new SdkBrowserOrigin(cluster.gateways[0]!.url);
        await origin.start();
        baseUrl = origin.url;
        browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
      });
      beforeEach(async () => {
        if (where !== 'chromium') return;
        page = await browser!.newPage();
        page.on('pageerror', (err) => pageErrors.push(err.message));
        driver = browserDriver(page, requestedUrls);
        await page.goto(`${baseUrl}/`);
      });
      afterEach(async () => {
        await page?.close();
        page = undefined;
      });
      after(async () => {
        await browser?.close();
        await origin?.stop();
        expect(pageErrors, 'the page ran without errors').to.deep.equal([]);
      });

      const start = (repositoryId: string, token: string, lastEventId?: string) =>
        driver.start({ baseUrl, repositoryId, token, heartbeatIntervalMs: HEARTBEAT_MS, ...(lastEventId ? { lastEventId } : {}) });

      it('gateway SIGKILLed and restarted twice while messages arrive: every message reaches the handler exactly once, in order', async () => {
        const { scope, writer, reader } = await room();
        const consumer = await start(scope.repositoryId, reader);
        const gateway = cluster.gateways[0]!;
        for (let i = 0; i < 2; i += 1) {
          const writing = writeMessages(cluster.apiClients, scope, writer, `${where}-kill-${i}`, 30, 50);
          // Each kill lands while messages arrive and the consumer is in the middle of them.
          await until(consumer, (r) => r.received.length >= 30 * i + 10);
          await gateway.kill();
          await sleep(300);
          await gateway.start();
          await writing;
        }
        await writeMessages(cluster.apiClients, scope, writer, `${where}-kill-after`, 20, 20);
        const history = await readRoomHistory(cluster.apiClients[0]!, scope, writer);
        const run = await until(consumer, (r) => distinct(r) >= history.length);
        await consumer.close();
        const opens = reasons(run, 'open').length;
        expectExactlyOnce(`${where}: gateway killed`, history, run.received, { opens, handoffs: reasons(run, 'handoff').length });
        expect(opens, 'reconnected after each kill').to.be.at.least(3);
        expect(run.statuses.some((s) => s.state === 'backoff'), 'waited with backoff while the gateway was down').to.equal(true);
        expect(run.stopped).to.equal(undefined);
      });

      it('gateway paused (SIGSTOP) past three heartbeat intervals: the silence counts as a dead connection and the consumer resumes from its cursor', async () => {
        const { scope, writer, reader } = await room();
        const consumer = await start(scope.repositoryId, reader);
        await writeMessages(cluster.apiClients, scope, writer, `${where}-pause-a`, 10, 20);
        await until(consumer, (r) => r.received.length >= 10);
        const gateway = cluster.gateways[0]!.process!.process;
        gateway.kill('SIGSTOP');
        try {
          await until(consumer, (r) => reasons(r, 'silence').length > 0, 4 * 3 * HEARTBEAT_MS + 5000);
        } finally {
          gateway.kill('SIGCONT');
        }
        await writeMessages(cluster.apiClients, scope, writer, `${where}-pause-b`, 10, 20);
        const history = await readRoomHistory(cluster.apiClients[0]!, scope, writer);
        const run = await until(consumer, (r) => distinct(r) >= history.length);
        await consumer.close();
        expect(reasons(run, 'silence').length, 'silence was detected').to.be.at.least(1);
        expectExactlyOnce(`${where}: gateway paused`, history, run.received, { silences: reasons(run, 'silence').length });
      });

      it('handoff reconnects at once (no backoff) from the last processed cursor', async () => {
        const { scope, writer, reader } = await room();
        const consumer = await start(scope.repositoryId, reader);
        await writeMessages(cluster.apiClients, scope, writer, `${where}-handoff`, 40, 150);
        const history = await readRoomHistory(cluster.apiClients[0]!, scope, writer);
        const run = await until(consumer, (r) => distinct(r) >= history.length);
        await consumer.close();
        const handoffs = run.statuses.flatMap((s, i) => (s.reason === 'handoff' ? [run.statuses[i + 1]] : []));
        expect(handoffs.length, 'rotations happened').to.be.at.least(1);
        for (const next of handoffs) if (next) expect(next.state, 'the status after a handoff is a connection, not a backoff').to.equal('connecting');
        expectExactlyOnce(`${where}: handoff`, history, run.received, { handoffs: handoffs.length });
      });

      it('reauthorize on a core outage: one fresh-authority attempt (one forced token refresh), refused with 503, stops with ChatStreamError; a new consumer from its cursor gets the rest', async () => {
        const { scope, writer, reader } = await room();
        const first = await start(scope.repositoryId, reader);
        await writeMessages(cluster.apiClients, scope, writer, `${where}-outage-a`, 15, 20);
        await until(first, (r) => r.received.length >= 15);
        await cluster.core.setFaults('unavailable');
        let stopped: ConsumerRun;
        try {
          stopped = await until(first, (r) => r.done, 20_000);
        } finally {
          await cluster.core.setFaults('ok');
        }
        expect(stopped.stopped, JSON.stringify(stopped.statuses.slice(-5))).to.deep.include({ name: 'ChatStreamError', reason: 'reauthorize_denied' });
        expect(stopped.tokenRequests.filter(Boolean), 'fresh authority was asked for exactly once').to.have.length(1);
        expect(stopped.cursor).to.equal(stopped.received.at(-1)!.id);
        await writeMessages(cluster.apiClients, scope, writer, `${where}-outage-b`, 15, 20);
        const history = await readRoomHistory(cluster.apiClients[0]!, scope, writer);
        const second = await start(scope.repositoryId, reader, stopped.cursor);
        const rest = await until(second, (r) => distinct(r) >= history.length - stopped.received.length);
        await second.close();
        const offset = Math.max(0, ...stopped.received.map((r) => r.connection));
        const received = [...stopped.received, ...rest.received.map((r) => ({ ...r, connection: r.connection + offset }))];
        expectExactlyOnce(`${where}: core outage`, history, received);
      });

      it('reauthorize after the reader loses membership: the fresh-authority attempt is denied (403) and the consumer stops, having handled everything it was allowed to read', async () => {
        const { scope, writer, reader, removeReader } = await room();
        const consumer = await start(scope.repositoryId, reader);
        await writeMessages(cluster.apiClients, scope, writer, `${where}-removed`, 12, 20);
        const history = await readRoomHistory(cluster.apiClients[0]!, scope, writer);
        await until(consumer, (r) => distinct(r) >= history.length);
        await removeReader();
        const run = await until(consumer, (r) => r.done, 20_000);
        expect(run.stopped, JSON.stringify(run.statuses.slice(-5))).to.deep.include({ name: 'ChatStreamError', reason: 'reauthorize_denied' });
        expect(run.tokenRequests.filter(Boolean)).to.have.length(1);
        expect(run.statuses.some((s) => s.code === 'AUTHORIZATION_DENIED')).to.equal(true);
        expectExactlyOnce(`${where}: membership removed`, history, run.received);
      });

      it('429 at the per-principal stream cap: the consumer waits Retry-After while another stream holds the slot, then connects and misses nothing', async () => {
        const { scope, writer, reader } = await room();
        const holder = new AbortController();
        const held = await fetch(`${cluster.gateways[0]!.url}${roomPath(scope)}/events`, {
          headers: { Accept: 'text/event-stream', Authorization: `Bearer ${reader}` },
          signal: holder.signal,
        });
        expect(held.status).to.equal(200);
        const drained = held.body!.pipeTo(new WritableStream()).catch(() => undefined);
        const consumer = await start(scope.repositoryId, reader);
        await writeMessages(cluster.apiClients, scope, writer, `${where}-capped-a`, 5, 20);
        const capped = await until(consumer, (r) => reasons(r, 'http_429').length > 0, 20_000);
        const refused = reasons(capped, 'http_429');
        expect(refused[0]?.code).to.equal('STREAM_PRINCIPAL_LIMIT');
        expect(refused[0]!.delayMs!, 'waited at least Retry-After (whole seconds)').to.be.at.least(1000);
        holder.abort();
        await drained;
        await writeMessages(cluster.apiClients, scope, writer, `${where}-capped-b`, 10, 20);
        const history = await readRoomHistory(cluster.apiClients[0]!, scope, writer);
        const run = await until(consumer, (r) => distinct(r) >= history.length);
        await consumer.close();
        expectExactlyOnce(`${where}: capped`, history, run.received, { refusals: reasons(run, 'http_429').length });
      });

      if (where === 'chromium') {
        it('the token never appears in a URL the page requested', () => {
          expect(requestedUrls.length).to.be.greaterThan(0);
          expect(requestedUrls.filter((u) => /Bearer|token|eyJ/i.test(u))).to.deep.equal([]);
        });
      }
    });
  }
});
