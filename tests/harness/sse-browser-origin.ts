import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';

/**
 * The test page's script: a fetch()-based SSE reader (ReadableStream and a small parser), as a
 * browser app must connect, since the built-in EventSource cannot send the bearer header and a
 * token never goes into a URL. It resumes with Last-Event-ID after every end of stream (a handoff)
 * and records each message event with the connection that delivered it in `window.sse`.
 */
const PAGE_SCRIPT = String.raw`
window.sse = { received: [], kinds: {}, connections: 0, refusals: [], stopped: false };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
window.startStream = async (path, token) => {
  const state = window.sse;
  let lastId = null;
  let failures = 0;
  while (!state.stopped) {
    const headers = { accept: 'text/event-stream', authorization: 'Bearer ' + token };
    if (lastId !== null) headers['last-event-id'] = lastId;
    let response;
    try {
      response = await fetch(path, { headers, cache: 'no-store' });
    } catch (err) {
      failures += 1;
      await sleep(Math.min(2000, 100 * 2 ** failures) * (0.5 + Math.random() / 2));
      continue;
    }
    if (response.status !== 200) {
      state.refusals.push(response.status);
      failures += 1;
      await sleep(Math.min(2000, 100 * 2 ** failures) * (0.5 + Math.random() / 2));
      continue;
    }
    failures = 0;
    state.connections += 1;
    const connection = state.connections;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let event = { name: '', data: [], id: null };
    const dispatch = () => {
      if (event.id !== null && !event.id.includes('\0')) lastId = event.id;
      if (event.data.length > 0) {
        const name = event.name || 'message';
        state.kinds[name] = (state.kinds[name] || 0) + 1;
        if (name === 'message') state.received.push({ id: lastId, data: event.data.join('\n'), connection });
      }
      event = { name: '', data: [], id: null };
    };
    const line = (text) => {
      if (text === '') return dispatch();
      if (text.startsWith(':')) return;
      const colon = text.indexOf(':');
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') event.data.push(value);
      else if (field === 'event') event.name = value;
      else if (field === 'id') event.id = value;
    };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        for (;;) {
          const match = /\r\n|\r|\n/.exec(buffer);
          // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
          if (!match || (match[0] === '\r' && match.index === buffer.length - 1)) break;
          line(buffer.slice(0, match.index));
          buffer = buffer.slice(match.index + match[0].length);
        }
      }
    } catch (err) {
      // A broken stream is resumed like an ended one.
    }
    await sleep(50 + Math.random() * 150);
  }
};
`;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>stream test</title></head><body><script>${PAGE_SCRIPT}</script></body></html>`;

/**
 * One origin for the browser: the test page at `/`, and `/v1/*` reverse-proxied (streaming) to a
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
      if (!req.url?.startsWith('/v1/')) {
        res.writeHead(404).end();
        return;
      }
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent: false },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.flushHeaders();
          answer.pipe(res);
          answer.on('aborted', () => res.destroy());
          answer.on('error', () => res.destroy());
        },
      );
      upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    this.url = `http://127.0.0.1:${address.port}`;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
