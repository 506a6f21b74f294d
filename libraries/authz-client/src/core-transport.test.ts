import { once } from 'node:events';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { selfSignedCertificate } from '../test/self-signed-certificate.ts';
import { eventually, failure, startRawHttpServer, writeInPieces, type RawHandler, type RawHttpServer } from '../test/raw-http-server.ts';
import { createCoreTransport, type CoreTransport } from './core-transport.ts';

const JSON_ANSWER = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}';

/** A node:http server counting the connections it accepts and the requests in flight at once. */
async function startHttpServer(handler: RequestListener): Promise<{ url: string; server: Server; connections: () => number; close(): Promise<void> }> {
  const server = createServer(handler);
  let connections = 0;
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    connections: () => connections,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += chunk;
  return text;
}

describe('core transport (createCoreTransport, on undici)', () => {
  let transport: CoreTransport;
  const post = (url: string, body = '{}', timeoutMs = 2000, maxResponseBytes = 1024) =>
    transport.send(new URL(url), { method: 'POST', headers: { 'content-type': 'application/json' }, body, timeoutMs, maxResponseBytes });

  afterEach(() => transport.close());

  describe('against node:http', () => {
    let http: Awaited<ReturnType<typeof startHttpServer>>;
    afterEach(() => http.close());

    it('sends method, path, headers and body, and reuses one connection for sequential calls', async () => {
      const seen: Array<{ method?: string; url?: string; type?: string; body: string }> = [];
      http = await startHttpServer(async (req, res) => {
        seen.push({ method: req.method, url: req.url, type: req.headers['content-type'], body: await bodyOf(req) });
        res.end('{"ok":true}');
      });
      transport = createCoreTransport();
      expect(await post(`${http.url}/internal/v1/authorize`, '{"n":1}')).to.deep.equal({ status: 200, text: '{"ok":true}' });
      await sleep(10); // the connection goes back to the pool once its answer has ended
      expect(await post(`${http.url}/internal/v1/authorize`, '{"n":2}')).to.deep.equal({ status: 200, text: '{"ok":true}' });
      expect(seen).to.deep.equal([
        { method: 'POST', url: '/internal/v1/authorize', type: 'application/json', body: '{"n":1}' },
        { method: 'POST', url: '/internal/v1/authorize', type: 'application/json', body: '{"n":2}' },
      ]);
      expect(http.connections()).to.equal(1);
    });

    it('opens connections up to the cap and queues calls beyond it', async () => {
      let inFlight = 0;
      let most = 0;
      http = await startHttpServer(async (_req, res) => {
        most = Math.max(most, ++inFlight);
        await sleep(30);
        inFlight--;
        res.end('{}');
      });
      transport = createCoreTransport({ connectionsPerOrigin: 4 });
      await Promise.all(Array.from({ length: 12 }, () => post(http.url)));
      expect(http.connections()).to.equal(4);
      expect(most).to.equal(4);
    });

    it('refuses an answer declaring more than maxResponseBytes, and one that grows past it', async () => {
      http = await startHttpServer((req, res) => {
        if (req.url === '/declared') return void res.end('x'.repeat(2048));
        res.write('x'.repeat(600));
        res.end('x'.repeat(600));
      });
      transport = createCoreTransport();
      expect((await failure(post(`${http.url}/declared`))).message).to.equal('core answered 2048 bytes, more than 1024');
      expect((await failure(post(`${http.url}/chunked`))).message).to.equal("core's answer grew past 1024 bytes");
    });

    it('gives back a status other than 200 as it is, redirects included', async () => {
      http = await startHttpServer((_req, res) => {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      });
      transport = createCoreTransport();
      expect(await post(http.url)).to.deep.equal({ status: 302, text: '' });
    });
  });

  describe('against raw servers', () => {
    let raw: RawHttpServer;
    let answer: RawHandler;
    beforeEach(async () => {
      raw = await startRawHttpServer((socket, request) => answer(socket, request));
      transport = createCoreTransport();
    });
    afterEach(() => raw.close());

    it('times out a server that never answers, closing the connection', async () => {
      answer = () => {};
      const started = Date.now();
      expect((await failure(post(raw.url, '{}', 200))).message).to.equal('core did not answer within 200 ms');
      expect(Date.now() - started).to.be.within(180, 400);
      await eventually(() => raw.closedConnections() === 1);
    });

    it('times out a server answering byte by byte too slowly', async () => {
      answer = (socket) => writeInPieces(socket, [...JSON_ANSWER].map((c) => c), 40);
      expect((await failure(post(raw.url, '{}', 300))).message).to.equal('core did not answer within 300 ms');
    });

    it('sends a call once more when its kept-alive connection closes before the answer', async () => {
      // The server's idle timeout firing as the request goes out: the connection closes unanswered.
      answer = (socket, request) => {
        if (request.connection === 0 && request.indexOnConnection === 1) socket.destroy();
        else socket.write(JSON_ANSWER);
      };
      await post(raw.url, '{"n":1}');
      await sleep(10);
      expect(await post(raw.url, '{"n":2}')).to.deep.equal({ status: 200, text: '{"ok":true}' });
      expect(raw.requests.map((r) => [r.connection, r.body])).to.deep.equal([
        [0, '{"n":1}'],
        [0, '{"n":2}'],
        [1, '{"n":2}'],
      ]);
    });

    it('sends a call at most twice when its connections keep being reset', async () => {
      answer = (socket) => void socket.resetAndDestroy();
      await failure(post(raw.url));
      expect(raw.requests).to.have.length(2);
    });
  });

  describe('over https', () => {
    let https: Server;
    let url: string;
    let connections = 0;
    let certificate: { cert: string; key: string };
    before(async function () {
      try {
        certificate = selfSignedCertificate();
      } catch {
        this.skip();
      }
      https = createHttpsServer(certificate, (_req, res) => res.end('{"secure":true}'));
      https.on('secureConnection', () => connections++);
      https.listen(0, '127.0.0.1');
      await once(https, 'listening');
      url = `https://127.0.0.1:${(https.address() as AddressInfo).port}/internal/v1/authorize`;
    });
    after(async () => {
      https?.closeAllConnections();
      await new Promise<void>((resolve) => (https ? https.close(() => resolve()) : resolve()));
    });

    it('calls core over TLS on a keep-alive connection', async () => {
      transport = createCoreTransport({ ca: certificate.cert });
      expect(await post(url)).to.deep.equal({ status: 200, text: '{"secure":true}' });
      await sleep(10);
      expect(await post(url)).to.deep.equal({ status: 200, text: '{"secure":true}' });
      expect(connections).to.equal(1);
    });

    it('refuses a certificate no trusted authority signed', async () => {
      transport = createCoreTransport();
      expect((await failure(post(url))).message).to.match(/self[- ]signed/i);
    });
  });

  describe('refusals', () => {
    beforeEach(() => {
      transport = createCoreTransport();
    });

    it('refuses header values with CR or LF', async () => {
      const err = await failure(transport.send(new URL('http://127.0.0.1:9/'), { method: 'GET', headers: { 'x-request-id': 'a\r\nx-admin: 1' }, timeoutMs: 100, maxResponseBytes: 10 }));
      expect(err.message).to.match(/invalid x-request-id header/i);
    });

    it('refuses URLs other than http: and https:', async () => {
      const err = await failure(transport.send(new URL('ftp://127.0.0.1/'), { method: 'GET', timeoutMs: 100, maxResponseBytes: 10 }));
      expect(err.message).to.equal('core URL ftp: is neither http: nor https:');
    });

    it('fails a refused connection at once', async () => {
      const closedPort = await startHttpServer(() => {});
      const url = closedPort.url;
      await closedPort.close();
      const started = Date.now();
      expect((await failure(transport.send(new URL(url), { method: 'GET', timeoutMs: 2000, maxResponseBytes: 10 }))).message).to.match(/ECONNREFUSED/);
      expect(Date.now() - started).to.be.below(500);
    });

    it('refuses calls once closed', async () => {
      await transport.close();
      expect((await failure(transport.send(new URL('http://127.0.0.1:9/'), { method: 'GET', timeoutMs: 100, maxResponseBytes: 10 }))).message).to.equal('the core transport is closed');
    });
  });
});
