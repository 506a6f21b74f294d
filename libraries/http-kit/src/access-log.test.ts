import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { pino } from 'pino';
import { Histogram, Registry } from 'prom-client';
import { AppError } from '@chat/contracts';
import { createRoutePipeline, type RouteTable } from './index.ts';

describe('the access log', () => {
  const lines: Array<Record<string, any>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const registry = new Registry();
  const httpDuration = new Histogram({ name: 'access_http_duration', help: 'h', labelNames: ['operation', 'method', 'status'], buckets: [0.1, 0.25, 1], registers: [registry] });
  const table: RouteTable<{ principal: string }, { principal: string }> = {
    service: 'access-log',
    services: {
      logger,
      httpDuration,
      access: {
        async decide(request) {
          if (request.headers.authorization !== 'Bearer good') throw new AppError('TOKEN_REJECTED', 'no');
          request.authenticated({ kind: 'bot', id: 'b_ci' });
          if (request.params.repositoryId === 'DENIED') throw new AppError('AUTHORIZATION_DENIED', 'no');
          return { principal: 'b_ci' };
        },
        async decidePrincipal(request) {
          request.authenticated({ kind: 'user', id: 'u_alice' });
          return { principal: 'u_alice' };
        },
      },
    },
    routes: [
      {
        method: 'POST',
        path: '/v1/repositories/:repositoryId/room/messages',
        access: 'write',
        handle: () => {
          throw new AppError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 1 });
        },
      },
      { method: 'GET', path: '/v1/repositories/:repositoryId/room', access: 'read', handle: () => ({ status: 200, body: {} }) },
      {
        method: 'GET',
        path: '/v1/inbox/events',
        access: 'principal',
        stream: true,
        handle: ({ res }) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.flushHeaders();
          // A stream that lasts: its latency sample must not wait for its end.
          setTimeout(() => res.end(': bye\n\n'), 400);
        },
      },
    ],
  };
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer(createRoutePipeline([table]).listener).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    lines.length = 0;
    httpDuration.reset();
  });

  async function lineOf(requestId: string) {
    for (let i = 0; i < 50 && !lines.some((l) => l.requestId === requestId && l.msg === 'request'); i++) await new Promise((r) => setTimeout(r, 10));
    return lines.find((l) => l.requestId === requestId && l.msg === 'request')!;
  }

  it('names the principal once its token is verified, and the code of the error envelope', async () => {
    const headers = { authorization: 'Bearer good', 'x-request-id': 'limited-1' };
    expect((await fetch(`${base}/v1/repositories/R1/room/messages?cursor=c`, { method: 'POST', headers })).status).to.equal(429);
    const limited = await lineOf('limited-1');
    expect(limited).to.include({ method: 'POST', route: '/v1/repositories/:repositoryId/room/messages', status: 429, code: 'RATE_LIMITED' });
    expect(limited.principal).to.deep.equal({ kind: 'bot', id: 'b_ci' });
    expect(limited.durationMs).to.be.a('number');

    await fetch(`${base}/v1/repositories/DENIED/room`, { headers: { authorization: 'Bearer good', 'x-request-id': 'denied-1' } });
    expect(await lineOf('denied-1')).to.deep.include({ status: 403, code: 'AUTHORIZATION_DENIED', principal: { kind: 'bot', id: 'b_ci' } });

    await fetch(`${base}/v1/repositories/R1/room`, { headers: { authorization: 'Bearer wrong-secret-token', 'x-request-id': 'rejected-1' } });
    const rejected = await lineOf('rejected-1');
    expect(rejected).to.include({ status: 401, code: 'TOKEN_REJECTED' });
    expect(rejected).not.to.have.property('principal');

    await fetch(`${base}/v1/repositories/R1/room`, { headers: { authorization: 'Bearer good', 'x-request-id': 'ok-1' } });
    const ok = await lineOf('ok-1');
    expect(ok).to.include({ status: 200, route: '/v1/repositories/:repositoryId/room' });
    expect(ok).not.to.have.property('code');
    expect(JSON.stringify(lines)).not.to.contain('wrong-secret-token').and.not.to.contain('cursor=c');
  });

  it("samples a stream's latency at its first byte, and logs its whole life when it ends", async () => {
    const response = await fetch(`${base}/v1/inbox/events`, { headers: { 'x-request-id': 'stream-1' } });
    expect(response.status).to.equal(200);
    // Headers are in; the stream goes on for 400 ms, yet its sample is already there.
    const sample = (await httpDuration.get()).values.find((v) => v.metricName === 'access_http_duration_count');
    expect(sample).to.deep.include({ value: 1, labels: { operation: '/v1/inbox/events', method: 'GET', status: '200' } });
    const fast = (await httpDuration.get()).values.find((v) => v.metricName === 'access_http_duration_bucket' && (v.labels as Record<string, unknown>).le === 0.1);
    expect(fast?.value).to.equal(1);
    await response.text();
    const line = await lineOf('stream-1');
    expect(line).to.deep.include({ route: '/v1/inbox/events', status: 200, principal: { kind: 'user', id: 'u_alice' } });
    expect(line.durationMs).to.be.at.least(350);
    expect(line.firstByteMs).to.be.below(100);
    // One sample per request: the end of the stream adds none.
    expect((await httpDuration.get()).values.find((v) => v.metricName === 'access_http_duration_count')?.value).to.equal(1);
  });
});
