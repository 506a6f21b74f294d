import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { closeServer, listenOnLoopback, proxyRequest } from './streaming-proxy.ts';

/**
 * The test page's script: the `eventsource` npm package (the same client the Node test uses, loaded
 * as an ES module), with the bearer header added through its `fetch` option, since the browser's
 * built-in EventSource cannot send it and a token never goes into a URL. The package reconnects by
 * itself with Last-Event-ID after every end of stream (a handoff); the page records each message
 * event with the connection that delivered it, and the Last-Event-ID of every request, in `window.sse`.
 */
const PAGE_SCRIPT = String.raw`
import { EventSource } from 'eventsource';
window.sse = { received: [], kinds: {}, connections: 0, lastEventIds: [], errors: 0 };
window.startStream = (path, token) => {
  const state = window.sse;
  const source = new EventSource(path, {
    fetch: (input, init) => {
      state.lastEventIds.push(init.headers['Last-Event-ID'] ?? null);
      return fetch(input, { ...init, headers: { ...init.headers, Authorization: 'Bearer ' + token }, cache: 'no-store' });
    },
  });
  source.addEventListener('open', () => (state.connections += 1));
  source.addEventListener('message', (e) => state.received.push({ id: e.lastEventId, data: e.data, connection: state.connections }));
  for (const kind of ['heartbeat', 'handoff', 'reauthorize']) source.addEventListener(kind, () => (state.kinds[kind] = (state.kinds[kind] || 0) + 1));
  source.addEventListener('error', () => (state.errors += 1));
  window.stopStream = () => source.close();
};
`;

/** The ES modules the page imports, served from this project's own node_modules. */
const MODULES: Record<string, string> = {
  eventsource: fileURLToPath(import.meta.resolve('eventsource')),
  'eventsource-parser': fileURLToPath(import.meta.resolve('eventsource-parser')),
};

const IMPORT_MAP = JSON.stringify({ imports: Object.fromEntries(Object.keys(MODULES).map((name) => [name, `/modules/${name}.js`])) });

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>stream test</title><script type="importmap">${IMPORT_MAP}</script></head><body><script type="module">${PAGE_SCRIPT}</script></body></html>`;

/**
 * One origin for the browser: the test page at `/`, its modules at `/modules/*`, and `/v1/*` reverse-proxied (streaming) to a
 * gateway, so the page's fetch() calls are same-origin (the gateway sends no CORS headers).
 */
export class SseBrowserOrigin {
  private server: Server | undefined;
  url = '';

  constructor(private readonly gatewayUrl: string) {}

  async start(): Promise<void> {
    const target = new URL(this.gatewayUrl);
    const server = createServer((req, res) => {
      if (req.url === '/' || req.url === '/index.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        res.end(PAGE);
        return;
      }
      const module = /^\/modules\/([a-z-]+)\.js$/.exec(req.url ?? '')?.[1];
      if (module !== undefined && module in MODULES) {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
        res.end(readFileSync(MODULES[module]!));
        return;
      }
      if (!req.url?.startsWith('/v1/')) {
        res.writeHead(404).end();
        return;
      }
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
