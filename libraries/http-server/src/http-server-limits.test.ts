import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createLimitedServer, DEFAULT_HTTP_SERVER_LIMITS } from './http-server-limits.ts';

describe('createLimitedServer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server?.listening) await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  it('sets the default limits when none are given', () => {
    server = createLimitedServer(() => undefined);
    expect({
      headersTimeoutMs: server.headersTimeout,
      requestTimeoutMs: server.requestTimeout,
      keepAliveTimeoutMs: server.keepAliveTimeout,
      maxConnections: server.maxConnections,
    }).to.deep.equal(DEFAULT_HTTP_SERVER_LIMITS);
  });

  it('keeps the headers deadline within the request deadline, as Node requires', () => {
    server = createLimitedServer(() => undefined, { headersTimeoutMs: 5000, requestTimeoutMs: 1000, keepAliveTimeoutMs: 1000, maxConnections: 10 });
    expect(server.headersTimeout).to.equal(1000);
  });

  it('answers 408 and closes the socket of a client that never finishes its headers', async function () {
    this.timeout(10_000);
    server = createLimitedServer((_req, res) => res.end(), { headersTimeoutMs: 300, requestTimeoutMs: 1000, keepAliveTimeoutMs: 1000, maxConnections: 10 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    const started = Date.now();
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    await once(socket, 'close');
    expect(Date.now() - started).to.be.below(5000);
    expect(answer).to.match(/^HTTP\/1\.1 408/);
  });

  // Behind a proxy, the service must hold an idle pooled connection longer than the proxy does
  // (infra/k8s: proxy 60 s, HTTP_KEEP_ALIVE_TIMEOUT_MS 75 s), so the proxy always closes first. That
  // holds only if nothing but keepAliveTimeout closes an idle connection: here the idle time passes
  // both the headers and the request deadline, and the connection still takes the next request.
  it('keeps an idle keep-alive connection for keepAliveTimeoutMs, past the headers and request deadlines, then closes it', async function () {
    this.timeout(10_000);
    const limits = { headersTimeoutMs: 200, requestTimeoutMs: 400, keepAliveTimeoutMs: 1500, maxConnections: 10 };
    server = createLimitedServer((_req, res) => res.end('ok'), limits);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const closed = once(socket, 'close');
    const answers = () => received.match(/HTTP\/1\.1 200/g)?.length ?? 0;
    const until = async (done: () => boolean) => {
      for (const deadline = Date.now() + 3000; !done() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    };
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => answers() === 1);
    await new Promise((r) => setTimeout(r, 900));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => answers() === 2);
    expect(answers(), 'the second request, 900 ms idle after the first').to.equal(2);
    const idleSince = Date.now();
    await closed;
    expect(Date.now() - idleSince).to.be.within(limits.keepAliveTimeoutMs - 100, limits.keepAliveTimeoutMs + 1500);
  });
});
