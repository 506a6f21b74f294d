import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { EventSource } from 'eventsource';
import { chromium, type Browser } from 'playwright-core';
import { roomPath, type RoomScope } from '../harness/api-client.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { writeMessages } from '../harness/gateway-writers.ts';
import { SseBrowserOrigin } from '../harness/sse-browser-origin.ts';
import { checkDeliveries, expectClean, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import type { ReceivedMessage } from '../harness/sse-resuming-client.ts';

const MAX_STREAM_AGE_MS = 2000;
const MESSAGES = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe(`streams: third-party clients resume across server handoffs (GATEWAY_MAX_STREAM_AGE_MS=${MAX_STREAM_AGE_MS})`, function () {
  this.timeout(120_000);
  let cluster: GatewayCluster;

  before(async () => {
    cluster = await startGatewayCluster({ apis: 1, gateways: 1, gatewayEnv: { GATEWAY_MAX_STREAM_AGE_MS: String(MAX_STREAM_AGE_MS) } });
  });
  after(async () => {
    await cluster?.stop();
  });

  /** A fresh room, its writer's and reader's tokens, and the stream path. */
  async function room(): Promise<{ scope: RoomScope; writer: string; reader: string; path: string }> {
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    return { scope, writer: await actors.writer(), reader: await actors.reader(), path: `${roomPath(scope)}/events` };
  }

  /** Writes the messages spread over several stream lifetimes; returns the room's history. */
  async function writeAcrossRotations(scope: RoomScope, writer: string): Promise<MessageResponse[]> {
    await writeMessages(cluster.apiClients, scope, writer, 'third-party', MESSAGES, 120);
    return readRoomHistory(cluster.apiClients[0]!, scope, writer);
  }

  it('the `eventsource` npm package (bearer header through its fetch option) reconnects by itself with Last-Event-ID after each handoff and gets every message once', async () => {
    const { scope, writer, reader, path } = await room();
    const received: ReceivedMessage[] = [];
    const kinds = new Map<string, number>();
    const lastEventIds: Array<string | null> = [];
    let connection = 0;
    const source = new EventSource(`${cluster.gateways[0]!.url}${path}`, {
      fetch: (input, init) => {
        const headers = init.headers as Record<string, string>;
        lastEventIds.push(headers['Last-Event-ID'] ?? headers['last-event-id'] ?? null);
        return fetch(input, { ...init, headers: { ...headers, Authorization: `Bearer ${reader}` } });
      },
    });
    source.addEventListener('open', () => (connection += 1));
    source.addEventListener('message', (e) => received.push({ id: e.lastEventId, data: e.data, connection }));
    for (const kind of ['heartbeat', 'handoff', 'reauthorize']) source.addEventListener(kind, () => kinds.set(kind, (kinds.get(kind) ?? 0) + 1));
    try {
      const history = await writeAcrossRotations(scope, writer);
      const deadline = Date.now() + 20_000;
      while (new Set(received.map((r) => r.id)).size < history.length && Date.now() < deadline) await sleep(100);
      const report = checkDeliveries(history, received);
      printReport('eventsource (node)', { ...report, samples: report.samples.length, connections: connection, handoffs: kinds.get('handoff') ?? 0 });
      expectClean(report);
      expect(kinds.get('handoff') ?? 0, 'the server rotated the stream').to.be.at.least(1);
      expect(connection, 'the client reconnected by itself').to.be.at.least(2);
      expect(lastEventIds.slice(1).every((id) => id !== null && id !== ''), 'every reconnect sent Last-Event-ID').to.equal(true);
      expect(kinds.get('reauthorize') ?? 0).to.equal(0);
    } finally {
      source.close();
    }
  });

  describe('headless Chromium (Debian chromium, playwright-core) running the same `eventsource` package', () => {
    let browser: Browser;
    let origin: SseBrowserOrigin;

    before(async function () {
      this.timeout(60_000);
      origin = new SseBrowserOrigin(cluster.gateways[0]!.url);
      await origin.start();
      browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    });
    after(async () => {
      await browser?.close();
      await origin?.stop();
    });

    it('reconnects by itself with Last-Event-ID after each handoff, the token only in the Authorization header, and gets every message once', async () => {
      const { scope, writer, reader, path } = await room();
      const page = await browser.newPage();
      const requestedUrls: string[] = [];
      const pageErrors: string[] = [];
      page.on('request', (r) => requestedUrls.push(r.url()));
      page.on('pageerror', (err) => pageErrors.push(err.message));
      try {
        await page.goto(`${origin.url}/`);
        await page.waitForFunction(() => 'startStream' in window);
        // The token reaches the page through the automation channel, never through a URL.
        await page.evaluate(([p, t]) => (window as unknown as { startStream(p: string, t: string): void }).startStream(p!, t!), [path, reader]);
        const history = await writeAcrossRotations(scope, writer);
        type PageState = { received: ReceivedMessage[]; kinds: Record<string, number>; connections: number; lastEventIds: Array<string | null> };
        const state = () => page.evaluate(() => (window as unknown as { sse: PageState }).sse);
        const deadline = Date.now() + 20_000;
        let seen = await state();
        while (new Set(seen.received.map((r) => r.id)).size < history.length && Date.now() < deadline) {
          await sleep(200);
          seen = await state();
        }
        await page.evaluate(() => (window as unknown as { stopStream(): void }).stopStream());
        const report = checkDeliveries(history, seen.received);
        printReport('eventsource (chromium)', { ...report, samples: report.samples.length, connections: seen.connections, handoffs: seen.kinds.handoff ?? 0 });
        expect(pageErrors, 'the page ran without errors').to.deep.equal([]);
        expectClean(report);
        expect(seen.kinds.handoff ?? 0, 'the server rotated the stream').to.be.at.least(1);
        expect(seen.connections, 'the package reconnected by itself').to.be.at.least(2);
        expect(seen.lastEventIds.slice(1).every((id) => id !== null && id !== ''), 'every reconnect sent Last-Event-ID').to.equal(true);
        expect(seen.kinds.reauthorize ?? 0).to.equal(0);
        expect(requestedUrls.filter((u) => u.includes(reader)), 'no token in any URL').to.deep.equal([]);
      } finally {
        await page.close();
      }
    });
  });
});
