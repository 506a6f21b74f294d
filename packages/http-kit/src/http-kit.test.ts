import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { pino } from 'pino';
import { Histogram, Registry } from 'prom-client';
import { AppError } from '@chat/contracts';
import { accessLog, assignRequestId, errorHandler, methodNotAllowed, parseScope, writeError, writeJson } from './index.ts';

describe('http-kit middleware', () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const histogram = new Histogram({ name: 'test_http_duration', help: 'h', labelNames: ['operation', 'method', 'status'], registers: [new Registry()] });
  let base: string;
  let close: () => Promise<void>;

  before(async () => {
    const app = express();
    app.use(accessLog(logger, histogram));
    app.use(assignRequestId);
    app.route('/v1/repositories/:repositoryId/room').get(parseScope, (_req, res) => void res.json(res.locals.scope)).all(methodNotAllowed('GET'));
    app.get('/limited', () => {
      throw new AppError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 2.2 });
    });
    app.get('/bug', () => {
      throw new Error('internal detail that must not leak');
    });
    app.use(errorHandler(logger));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = async () => {
      server.close();
      server.closeAllConnections();
    };
  });
  after(async () => close());

  async function get(path: string, init: RequestInit = {}) {
    const response = await fetch(base + path, init);
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
  }

  it('echoes a well-formed X-Request-Id and makes a ULID otherwise', async () => {
    const echoed = await get('/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room', { headers: { 'x-request-id': 'abc.1:2-3_4' } });
    expect(echoed.status).to.equal(200);
    expect(echoed.headers.get('x-request-id')).to.equal('abc.1:2-3_4');
    const made = await get('/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room');
    expect(made.headers.get('x-request-id')).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('refuses a malformed X-Request-Id with 400 REQUEST_ID_INVALID under a generated ID', async () => {
    const answer = await get('/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room', { headers: { 'x-request-id': 'has space' } });
    expect(answer.status).to.equal(400);
    expect(answer.body.error.code).to.equal('REQUEST_ID_INVALID');
    expect(answer.body.error.requestId).to.equal(answer.headers.get('x-request-id'));
  });

  it('writes AppErrors as the envelope with their status and a whole-second Retry-After', async () => {
    const answer = await get('/limited');
    expect(answer.status).to.equal(429);
    expect(answer.headers.get('retry-after')).to.equal('3');
    expect(answer.body).to.deep.equal({ error: { code: 'RATE_LIMITED', message: 'slow down', requestId: answer.headers.get('x-request-id') } });
  });

  it('marks every error envelope Cache-Control: no-store, whether express or a plain route writes it', async () => {
    for (const path of ['/limited', '/v1/repositories/not-a-ulid/room']) {
      expect((await get(path)).headers.get('cache-control'), path).to.equal('no-store');
    }
    const server = createServer((req, res) => {
      (res as typeof res & { locals: Record<string, unknown> }).locals = { requestId: 'plain' };
      if (req.url === '/ok') writeJson(res, 200, { ok: true });
      else writeError(logger, req, res as typeof res & { locals: Record<string, unknown> }, new AppError('AUTHORIZATION_UNAVAILABLE', 'later'));
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const plainBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const path of ['/ok', '/error']) {
        const response = await fetch(plainBase + path);
        expect(response.headers.get('cache-control'), path).to.equal('no-store');
        await response.arrayBuffer();
      }
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });

  it('answers an unexpected error with a 500 that names no internals, and logs it', async () => {
    const answer = await get('/bug');
    expect(answer.status).to.equal(500);
    expect(answer.body.error.code).to.equal('RESPONSE_INVALID');
    expect(JSON.stringify(answer.body)).not.to.contain('internal detail');
    const logged = lines.find((l) => l.msg === 'unhandled error');
    expect(logged, 'the error is logged through the request logger, with the request ID').to.include({ requestId: answer.headers.get('x-request-id') });
  });

  it('gives each request a child logger bound to its request ID', async () => {
    lines.length = 0;
    await get('/limited', { headers: { 'x-request-id': 'child-check' } });
    await new Promise((r) => setTimeout(r, 20));
    expect(lines.filter((l) => l.requestId === 'child-check').map((l) => l.msg)).to.include('request');
  });

  it('answers bad percent-encoding and non-ULID scopes with 400 SCOPE_INVALID', async () => {
    expect((await get('/v1/repositories/%C0%AE/room')).body.error.code).to.equal('SCOPE_INVALID');
    expect((await get('/v1/repositories/not-a-ulid/room')).body.error.code).to.equal('SCOPE_INVALID');
  });

  it('answers a wrong method with 405, Allow and the envelope', async () => {
    const answer = await get('/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room', { method: 'DELETE' });
    expect(answer.status).to.equal(405);
    expect(answer.headers.get('allow')).to.equal('GET');
    expect(answer.body.error.code).to.equal('REQUEST_INVALID');
  });

  it('writes one access line per request with its ID and route template, never its headers', async () => {
    lines.length = 0;
    await get('/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room', { headers: { authorization: 'Bearer secret-token-value', 'x-request-id': 'line-check' } });
    await new Promise((r) => setTimeout(r, 20));
    const access = lines.filter((l) => l.msg === 'request');
    expect(access).to.have.length(1);
    expect(access[0]).to.include({ requestId: 'line-check', operation: '/v1/repositories/:repositoryId/room', status: 200, method: 'GET' });
    expect(JSON.stringify(lines)).not.to.contain('secret-token-value');
  });
});
