import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, ServerResponse, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { StreamSession } from '../domain/stream-session.ts';
import { GatewayHarness, roomEventsPath } from '../../test/gateway-harness.ts';
import { RawStreamResponse } from './raw-stream-response.ts';
import { attachStreamFront } from './stream-front.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw client socket: writes exactly the bytes given, collects everything it receives. */
async function rawClient(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const parts: Buffer[] = [];
  socket.on('data', (d) => parts.push(d));
  const closed = once(socket, 'close').then(() => undefined);
  return { socket, received: () => Buffer.concat(parts).toString('latin1'), closed };
}

/** A client that keeps its side open after the server's FIN, as a client that never closes does. */
async function halfOpenClient(port: number): Promise<{ socket: Socket; received: () => string; ended: Promise<void> }> {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const parts: Buffer[] = [];
  socket.on('data', (d) => parts.push(d));
  const ended = once(socket, 'end').then(() => undefined);
  return { socket, received: () => Buffer.concat(parts).toString('latin1'), ended };
}

const KEEP_ALIVE_MS = 1000;

async function until(check: () => boolean | Promise<boolean>, what: string, withinMs = 5000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('the gateway’s stream front', function () {
  this.timeout(60_000);
  const h = new GatewayHarness({ target: 'postgres+redis', repositories: 12 });
  let server: Server;
  let port: number;
  before(async () => {
    await h.start();
    // The front as main.ts attaches it, with a short head deadline for the slow-client case.
    server = createServer(h.gateway.pipeline.listener);
    attachStreamFront(server, { pipeline: h.gateway.pipeline, headersTimeoutMs: 300 });
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await h.stop();
  });

  const held = () => [...(h.gateway.hub as unknown as { sessions: Set<StreamSession> }).sessions].map((s) => s.output.response);
  const get = (path: string, token: string) => `GET ${path} HTTP/1.1\r\nHost: gw\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`;

  it('serves a stream GET that arrives in pieces on the socket itself, in chunked encoding, and closes the connection with it', async () => {
    const token = await h.token();
    const request = get(roomEventsPath(h.repository().id), token);
    const client = await rawClient(port);
    for (const piece of [request.slice(0, 7), request.slice(7, 60), request.slice(60)]) {
      client.socket.write(piece);
      await sleep(30);
    }
    await until(() => client.received().includes('\r\n\r\n'), 'the head');
    const head = client.received().split('\r\n\r\n')[0]!;
    expect(head).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head).to.match(/\r\nTransfer-Encoding: chunked\r\n/);
    expect(head).to.match(/\r\nConnection: close(\r\n|$)/);
    expect(head).to.match(/\r\nX-Request-Id: [0-9A-Z]{26}\r\n/);
    expect(held().filter((res) => res instanceof RawStreamResponse)).to.have.length(1);
    // A client that half-closes is gone, as through Node's server.
    client.socket.end();
    await client.closed;
    await until(() => held().length === 0, 'the session to close');
  });

  it('answers a refused stream GET itself, as Node would: the envelope with its length, then the end of the connection', async () => {
    const client = await rawClient(port);
    client.socket.write(`GET ${roomEventsPath(h.repository().id)} HTTP/1.1\r\nHost: gw\r\nAccept: text/event-stream\r\n\r\n`);
    await client.closed;
    const [head, body] = client.received().split('\r\n\r\n') as [string, string];
    expect(head).to.match(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    expect(head).to.match(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    expect(head).to.contain(`\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`);
    const requestId = /\r\nX-Request-Id: (\S+)\r\n/.exec(head)?.[1];
    expect(JSON.parse(body).error).to.include({ code: 'AUTHENTICATION_REQUIRED', requestId });
  });

  it('hands Node’s server whatever is not a plain stream GET, with the bytes it read: another method, a pipelined request, an oversized head', async () => {
    const token = await h.token();
    const path = roomEventsPath(h.repository().id);

    const post = await rawClient(port);
    post.socket.write(`POST ${path} HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    await post.closed;
    expect(post.received()).to.match(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(post.received()).to.contain('"code":"REQUEST_INVALID"');
    expect(post.received()).to.match(/\r\nAllow: GET\r\n/);

    // Two requests in one write: Node's server parses both; the stream opens on its response.
    const pipelined = await rawClient(port);
    pipelined.socket.write(get(path, token) + `GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n`);
    await until(() => pipelined.received().includes('\r\n\r\n'), 'the head');
    expect(pipelined.received()).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    await until(() => held().some((res) => Object.getPrototypeOf(res) === ServerResponse.prototype), 'the stream on Node’s response');
    pipelined.socket.destroy();

    const huge = await rawClient(port);
    huge.socket.write(`GET ${path} HTTP/1.1\r\nHost: gw\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`);
    await until(() => huge.received().length > 0, 'an answer');
    expect(huge.received()).to.match(/^HTTP\/1\.1 431 /);
    huge.socket.destroy();

    await until(() => held().length === 0, 'every session to close');
  });

  it('answers 408 and closes a connection whose first head does not arrive within the deadline, as Node’s server does', async () => {
    const silent = await rawClient(port);
    const partial = await rawClient(port);
    partial.socket.write(`GET ${roomEventsPath(h.repository().id)} HTTP/1.1\r\nHost: gw\r\n`);
    const started = Date.now();
    await Promise.all([silent.closed, partial.closed]);
    expect(Date.now() - started).to.be.within(200, 2000);
    for (const c of [silent, partial]) expect(c.received()).to.match(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    await until(() => held().length === 0, 'every session to close');
  });

  const connections = () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  it('stays up when a client resets its connection after the 408, before it, or after a refusal', async () => {
    const baseline = await connections();
    const path = roomEventsPath(h.repository().id);
    const late = await Promise.all(Array.from({ length: 20 }, () => halfOpenClient(port)));
    for (const client of late) client.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n`);
    await until(() => late.every((c) => c.received().startsWith('HTTP/1.1 408 ')), 'every 408');
    // An RST after the answer (resetAndDestroy sends one, as SO_LINGER {1, 0} does).
    for (const client of late) client.socket.resetAndDestroy();
    const early = await Promise.all(Array.from({ length: 20 }, () => halfOpenClient(port)));
    for (const client of early) client.socket.write('GET / HT');
    const refused = await Promise.all(Array.from({ length: 20 }, () => halfOpenClient(port)));
    for (const client of refused) client.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    await sleep(50);
    for (const client of early) client.socket.resetAndDestroy();
    await until(() => refused.every((c) => c.received().includes('"AUTHENTICATION_REQUIRED"')), 'every 401');
    for (const client of refused) client.socket.resetAndDestroy();

    await until(async () => (await connections()) === baseline, 'every connection to close');
    // Still serving: a fresh request gets its answer.
    const probe = await rawClient(port);
    probe.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    await probe.closed;
    expect(probe.received()).to.match(/^HTTP\/1\.1 401 /);
  });

  it('closes fully every connection it answered itself, so 200 clients that never close hold nothing past the keep-alive time', async () => {
    const baseline = await connections();
    const path = roomEventsPath(h.repository().id);
    const clients = await Promise.all(Array.from({ length: 200 }, () => halfOpenClient(port)));
    // 180 unauthenticated stream GETs (401) and 20 heads that never finish (408).
    clients.forEach((client, i) => client.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n${i % 10 === 0 ? '' : '\r\n'}`));
    await Promise.all(clients.map((client) => client.ended));
    clients.forEach((client, i) => expect(client.received()).to.match(i % 10 === 0 ? /^HTTP\/1\.1 408 / : /^HTTP\/1\.1 401 /));
    // Every client still has its side open; the server's side must not be.
    expect(clients.every((client) => !client.socket.destroyed)).to.equal(true);
    await until(async () => (await connections()) === baseline, 'the connection count to return to its baseline', KEEP_ALIVE_MS);
    for (const client of clients) client.socket.destroy();
  });
});
