import { once } from 'node:events';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { selfSignedCertificate } from '../../test/self-signed-certificate.ts';
import { eventually, failure, startRawHttpServer, writeInPieces, type RawHandler, type RawHttpServer } from '../../test/raw-http-server.ts';
import { createCoreTransport, type CoreTransport } from '../core-transport.ts';

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

describe('Http1Client connections (createCoreTransport)', () => {
  let transport: CoreTransport;
  const post = (url: string, body = '{}', timeoutMs = 2000) =>
    transport.send(new URL(url), { method: 'POST', headers: { 'content-type': 'application/json' }, body, timeoutMs, maxResponseBytes: 1024 });

  afterEach(() => transport.close());

  describe('against node:http', () => {
    let http: Awaited<ReturnType<typeof startHttpServer>>;
    afterEach(() => http.close());

    it('sends method, path, Host, Content-Length, headers and body, and reuses one socket for sequential calls', async () => {
      const seen: Array<{ method?: string; url?: string; headers: Record<string, unknown>; body: string }> = [];
      http = await startHttpServer(async (req, res) => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body: await bodyOf(req) });
        res.setHeader('content-type', 'application/json');
        res.end('{"allowed":true}');
      });
      transport = createCoreTransport();
      for (let i = 0; i < 5; i++) {
        const body = JSON.stringify({ i, name: 'Zoë' });
        const answer = await transport.send(new URL(`${http.url}/internal/v1/authorize?x=1`), {
          method: 'POST',
          headers: { authorization: 'Bearer t', 'x-request-id': `r${i}` },
          body,
          timeoutMs: 2000,
          maxResponseBytes: 1024,
        });
        expect(answer).to.deep.equal({ status: 200, text: '{"allowed":true}' });
      }
      expect(http.connections()).to.equal(1);
      expect(seen[4]).to.deep.include({ method: 'POST', url: '/internal/v1/authorize?x=1', body: '{"i":4,"name":"Zoë"}' });
      expect(seen[4]!.headers).to.include({ host: new URL(http.url).host, 'content-length': '21', authorization: 'Bearer t', 'x-request-id': 'r4' });
    });

    it('opens connections up to the cap and queues calls beyond it', async () => {
      let inFlight = 0;
      let mostInFlight = 0;
      http = await startHttpServer(async (req, res) => {
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await bodyOf(req);
        await sleep(30);
        inFlight--;
        res.end(req.url);
      });
      transport = createCoreTransport({ connectionsPerOrigin: 4 });
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(`${http.url}/${i}`)));
      expect(answers.map((a) => a.text)).to.deep.equal(Array.from({ length: 12 }, (_, i) => `/${i}`));
      expect(http.connections()).to.equal(4);
      expect(mostInFlight).to.equal(4);
    });

    it('answers a queued call within its own deadline when no connection frees up in time', async () => {
      http = await startHttpServer(async (_req, res) => {
        await sleep(300);
        res.end('late');
      });
      transport = createCoreTransport({ connectionsPerOrigin: 1 });
      const first = post(http.url, '{}', 1000);
      const started = Date.now();
      expect((await failure(post(http.url, '{}', 100))).message).to.match(/did not answer within 100 ms/);
      expect(Date.now() - started).to.be.below(250);
      expect((await first).text).to.equal('late');
      expect(http.connections()).to.equal(1);
    });

    it('respects Connection: close from the server', async () => {
      http = await startHttpServer((_req, res) => {
        res.setHeader('connection', 'close');
        res.end('bye');
      });
      transport = createCoreTransport();
      expect((await post(http.url)).text).to.equal('bye');
      expect((await post(http.url)).text).to.equal('bye');
      expect(http.connections()).to.equal(2);
    });

    it('honours Keep-Alive: timeout= minus a margin (a 1 s timeout leaves nothing to reuse)', async () => {
      http = await startHttpServer((_req, res) => res.end('ok'));
      http.server.keepAliveTimeout = 1000;
      transport = createCoreTransport();
      await post(http.url);
      await post(http.url);
      expect(http.connections()).to.equal(2);
    });

    it('closes idle connections after idleTimeoutMs', async () => {
      let closed = 0;
      http = await startHttpServer((_req, res) => res.end('ok'));
      http.server.on('connection', (socket: Socket) => socket.on('close', () => closed++));
      transport = createCoreTransport({ idleTimeoutMs: 100 });
      await post(http.url);
      await eventually(() => closed === 1, 1000);
      await post(http.url);
      expect(http.connections()).to.equal(2);
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

    it('times out a server that never answers, destroying the socket', async () => {
      answer = () => {};
      const started = Date.now();
      expect((await failure(post(raw.url, '{}', 200))).message).to.equal('core did not answer within 200 ms');
      expect(Date.now() - started).to.be.within(180, 400);
      await eventually(() => raw.closedConnections() === 1);
    });

    it('times out a server answering byte by byte too slowly, destroying the socket', async () => {
      answer = (socket) => writeInPieces(socket, [...JSON_ANSWER].map((c) => c), 40);
      expect((await failure(post(raw.url, '{}', 300))).message).to.equal('core did not answer within 300 ms');
      await eventually(() => raw.closedConnections() === 1);
    });

    it('retries once, on a fresh connection, when a reused socket closes before any answer byte', async () => {
      // The server's idle timeout firing as the request goes out: the socket closes unanswered.
      answer = (socket, request) => {
        if (request.connection === 0 && request.indexOnConnection === 1) socket.destroy();
        else socket.write(JSON_ANSWER);
      };
      await post(raw.url, '{"n":1}');
      expect(await post(raw.url, '{"n":2}')).to.deep.equal({ status: 200, text: '{"ok":true}' });
      expect(raw.connections()).to.equal(2);
      expect(raw.requests.map((r) => [r.connection, r.body])).to.deep.equal([
        [0, '{"n":1}'],
        [0, '{"n":2}'],
        [1, '{"n":2}'],
      ]);
    });

    it('retries a reused socket reset before any answer byte, but only once', async () => {
      answer = (socket, request) => {
        if (request.connection === 0 && request.indexOnConnection === 0) socket.write(JSON_ANSWER);
        else socket.resetAndDestroy();
      };
      await post(raw.url);
      expect((await failure(post(raw.url))).message).to.match(/core connection failed: .*ECONNRESET|without answering/);
      expect(raw.connections()).to.equal(2);
      expect(raw.requests).to.have.length(3);
    });

    it('does not retry a fresh connection closed unanswered', async () => {
      answer = (socket) => void socket.destroy();
      expect((await failure(post(raw.url))).message).to.match(/closed the connection without answering|ECONNRESET/);
      expect(raw.connections()).to.equal(1);
    });

    it('does not retry once part of the answer arrived', async () => {
      answer = async (socket, request) => {
        if (request.indexOnConnection === 0) return void socket.write(JSON_ANSWER);
        await writeInPieces(socket, ['HTTP/1.1 200 OK\r\nContent-Le']);
        socket.destroy();
      };
      await post(raw.url);
      expect((await failure(post(raw.url))).message).to.match(/in the middle of its answer/);
      expect(raw.connections()).to.equal(1);
    });

    it('fails a call whose answer is reset midway', async () => {
      answer = async (socket) => {
        await writeInPieces(socket, ['HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial":']);
        socket.resetAndDestroy();
      };
      expect((await failure(post(raw.url))).message).to.match(/core connection failed: .*ECONNRESET/);
      expect(raw.connections()).to.equal(1);
    });

    it('survives an idle socket being reset or spoken to between calls, and uses a new one', async () => {
      answer = (socket) => void socket.write(JSON_ANSWER);
      await post(raw.url);
      raw.sockets()[0]!.resetAndDestroy();
      await eventually(() => raw.closedConnections() === 1);
      await sleep(20);
      expect((await post(raw.url)).status).to.equal(200);
      raw.sockets()[0]!.write('HTTP/1.1 200 OK\r\n\r\nunasked');
      await eventually(() => raw.closedConnections() === 2);
      expect((await post(raw.url)).status).to.equal(200);
      expect(raw.connections()).to.equal(3);
    });

    it('close() destroys idle sockets, lets a call on the wire finish, and refuses new calls', async () => {
      answer = async (socket, request) => {
        if (request.body === '"slow"') await sleep(100);
        socket.write(JSON_ANSWER);
      };
      await Promise.all([post(raw.url), post(raw.url)]);
      const slow = post(raw.url, '"slow"');
      await eventually(() => raw.requests.length === 3);
      await transport.close();
      await eventually(() => raw.closedConnections() === 1);
      expect((await slow).status).to.equal(200);
      await eventually(() => raw.closedConnections() === 2);
      expect((await failure(post(raw.url))).message).to.equal('core transport is closed');
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
      expect(await post(url)).to.deep.equal({ status: 200, text: '{"secure":true}' });
      expect(connections).to.equal(1);
    });

    it('refuses a certificate no trusted authority signed', async () => {
      transport = createCoreTransport();
      expect((await failure(post(url))).message).to.match(/core connection failed: .*self[- ]signed/i);
    });
  });

  describe('refusals before any connection', () => {
    beforeEach(() => {
      transport = createCoreTransport();
    });

    it('refuses header values with CR or LF', async () => {
      const err = await failure(transport.send(new URL('http://127.0.0.1:9/'), { method: 'GET', headers: { 'x-request-id': 'a\r\nx-admin: 1' }, timeoutMs: 100, maxResponseBytes: 10 }));
      expect(err.message).to.match(/refuses a value of header x-request-id/);
    });

    it('refuses headers the transport sets itself', async () => {
      const err = await failure(transport.send(new URL('http://127.0.0.1:9/'), { method: 'GET', headers: { 'Content-Length': '5' }, timeoutMs: 100, maxResponseBytes: 10 }));
      expect(err.message).to.match(/refuses the header name "Content-Length"/);
    });

    it('refuses URLs other than http: and https:', async () => {
      const err = await failure(transport.send(new URL('ftp://127.0.0.1/'), { method: 'GET', timeoutMs: 100, maxResponseBytes: 10 }));
      expect(err.message).to.match(/http: and https: only, not ftp:/);
    });

    it('fails a refused connection at once', async () => {
      const closedPort = await startHttpServer(() => {});
      const url = closedPort.url;
      await closedPort.close();
      expect((await failure(transport.send(new URL(url), { method: 'GET', timeoutMs: 2000, maxResponseBytes: 10 }))).message).to.match(/core connection failed: .*ECONNREFUSED/);
    });
  });
});
