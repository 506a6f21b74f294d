import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeServer, listenOnLoopback, proxyRequest } from '../harness/streaming-proxy.ts';
import type { ConsumerDriver, ConsumerRun } from './stream-consumer-drivers.ts';
import type { Page } from 'playwright-core';

/** The SDK's compiled ES modules (`clients/client/dist`, emitted by its `build`). */
const SDK_DIR = dirname(fileURLToPath(import.meta.resolve('@chat/client')));

/**
 * The page's consumer: the same as `nodeDriver`, on the SDK's dist modules loaded through an import
 * map. The token reaches it through the automation channel and travels only in the Authorization header.
 */
const PAGE_SCRIPT = String.raw`
import { ChatClient, ChatStreamError } from '@chat/client';
window.runs = [];
window.streams = [];
window.startConsumer = (options) => {
  const run = { received: [], statuses: [], tokenRequests: [], done: false };
  let connection = 0;
  const client = new ChatClient({ baseUrl: location.origin, token: ({ forceRefresh }) => { run.tokenRequests.push(forceRefresh); return options.token; } });
  const stream = client.streamRoom({ repositoryId: options.repositoryId, lastEventId: options.lastEventId ?? null }, {
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    heartbeatTimeoutFactor: 3,
    backoff: { baseDelayMs: 100, maxDelayMs: 1000 },
    onStatus: (status) => {
      if (status.reason === 'open') connection += 1;
      const entry = { state: status.state, reason: status.reason };
      if (status.delayMs !== undefined) entry.delayMs = status.delayMs;
      const code = status.error && (status.error.code ?? (status.error.cause && status.error.cause.code));
      if (code) entry.code = code;
      run.statuses.push(entry);
    },
  });
  stream.run(async (event) => {
    await new Promise((r) => setTimeout(r, Math.random() * 3));
    run.received.push({ id: event.id, data: JSON.stringify(event.data), connection });
  }).catch((error) => {
    run.stopped = { name: error.name, message: error.message };
    if (error instanceof ChatStreamError) { run.stopped.reason = error.reason; if (error.cursor) run.stopped.cursor = error.cursor; }
  }).finally(() => { run.done = true; });
  window.runs.push(run);
  window.streams.push(stream);
  return window.runs.length - 1;
};
window.consumerState = (i) => { const s = window.streams[i]; return { ...window.runs[i], ...(s.cursor ? { cursor: s.cursor } : {}) }; };
window.closeConsumer = (i) => window.streams[i].close();
`;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>sdk test</title><script type="importmap">${JSON.stringify({ imports: { '@chat/client': '/sdk/index.js' } })}</script></head><body><script type="module">${PAGE_SCRIPT}</script></body></html>`;

/**
 * One origin for Chromium (as `harness/sse-browser-origin.ts` does for the `eventsource` package):
 * the test page at `/`, the SDK's dist modules at `/sdk/*`, and `/v1/*` reverse-proxied, streaming,
 * to a gateway, so the page's requests are same-origin.
 */
export class SdkBrowserOrigin {
  private server: Server | undefined;
  url = '';

  constructor(private readonly gatewayUrl: string) {}

  async start(): Promise<void> {
    const target = new URL(this.gatewayUrl);
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      if (path === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(PAGE);
        return;
      }
      if (path.startsWith('/sdk/') && path.endsWith('.js')) {
        const file = normalize(join(SDK_DIR, path.slice('/sdk/'.length)));
        if (!file.startsWith(SDK_DIR)) return void res.writeHead(404).end();
        try {
          const text = readFileSync(file);
          res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
          res.end(text);
        } catch {
          res.writeHead(404).end();
        }
        return;
      }
      if (!path.startsWith('/v1/')) return void res.writeHead(404).end();
      proxyRequest(req, res, target);
    });
    this.url = await listenOnLoopback(server);
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await closeServer(server);
  }
}

/** Runs consumers in one Chromium page served by `origin`; every request URL the page makes is kept. */
export function browserDriver(page: Page, requestedUrls: string[]): ConsumerDriver {
  page.on('request', (r) => requestedUrls.push(r.url()));
  return {
    name: 'chromium',
    async start(options) {
      await page.waitForFunction(() => 'startConsumer' in window);
      const { baseUrl: _origin, ...rest } = options;
      const index = await page.evaluate((o) => (window as unknown as { startConsumer(o: unknown): number }).startConsumer(o), rest);
      return {
        state: () => page.evaluate((i) => (window as unknown as { consumerState(i: number): ConsumerRun }).consumerState(i), index),
        close: () => page.evaluate((i) => (window as unknown as { closeConsumer(i: number): void }).closeConsumer(i), index),
      };
    },
  };
}
