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
});
