import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { pino } from 'pino';
import { Histogram, Registry } from 'prom-client';
import { AppError } from '@chat/contracts';
import { createRoutePipeline, type RouteTable } from './index.ts';

describe('the route pipeline', () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const registry = new Registry();
  const httpDuration = new Histogram({ name: 'test_http_duration', help: 'h', labelNames: ['operation', 'method', 'status'], registers: [registry] });
  const services = { logger, httpDuration };
  const table: RouteTable = {
    service: 'test',
    services,
    routes: [
      { method: 'GET', path: '/v1/things/:thingId', access: 'public', handle: ({ params, query }) => ({ status: 200, body: { params, query } }) },
      { method: 'POST', path: '/v1/things/:thingId', access: 'public', handle: () => ({ status: 201, body: { made: true } }) },
      { method: 'DELETE', path: '/v1/things/:thingId', access: 'public', handle: () => ({ status: 204, body: undefined }) },
      {
        method: 'GET',
        path: '/limited',
        access: 'public',
        handle: () => {
          throw new AppError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 2.2 });
        },
      },
      {
        method: 'GET',
        path: '/bug',
        access: 'public',
        handle: async () => {
          throw new Error('internal detail that must not leak');
        },
      },
      {
        method: 'GET',
        path: '/raw',
        access: 'public',
        handle: ({ res }) => {
          res.setHeader('Cache-Control', 'public, max-age=60');
          res.end('raw answer');
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

  async function call(path: string, init: RequestInit = {}) {
    const response = await fetch(base + path, init);
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: response.headers.get('content-type')?.startsWith('application/json') && text ? (JSON.parse(text) as Record<string, any>) : undefined };
  }

  it('routes by method and template, decoding parameters and parsing the query', async () => {
    const answer = await call('/v1/things/a%20b?limit=5&cursor=x&cursor=y');
    expect(answer.status).to.equal(200);
    expect(answer.body).to.deep.equal({ params: { thingId: 'a b' }, query: { limit: '5', cursor: ['x', 'y'] } });
    expect((await call('/v1/things/7', { method: 'POST' })).status).to.equal(201);
  });

  it('serves DELETE, and writes a 204 with no body and no content headers', async () => {
    const answer = await call('/v1/things/7', { method: 'DELETE' });
    expect(answer.status).to.equal(204);
    expect(answer.text).to.equal('');
    expect(answer.headers.get('content-type')).to.equal(null);
    expect(answer.headers.get('x-request-id')).to.be.a('string');
    expect(answer.headers.get('cache-control')).to.equal('no-store');
  });

  it('matches literals whatever their case and allows a trailing slash, as express does', async () => {
    expect((await call('/V1/THINGS/7')).body).to.have.nested.property('params.thingId', '7');
    expect((await call('/v1/things/7/')).status).to.equal(200);
    expect((await call('/v1/things/')).status).to.equal(404);
  });

  it('echoes a well-formed X-Request-Id and makes a ULID otherwise', async () => {
    expect((await call('/v1/things/1', { headers: { 'x-request-id': 'abc.1:2-3_4' } })).headers.get('x-request-id')).to.equal('abc.1:2-3_4');
    expect((await call('/v1/things/1')).headers.get('x-request-id')).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('refuses a malformed X-Request-Id with 400 REQUEST_ID_INVALID under a generated ID', async () => {
    const answer = await call('/v1/things/1', { headers: { 'x-request-id': 'has space' } });
    expect(answer.status).to.equal(400);
    expect(answer.body!.error.code).to.equal('REQUEST_ID_INVALID');
    expect(answer.body!.error.requestId).to.equal(answer.headers.get('x-request-id'));
  });

  it('writes AppErrors as the envelope with their status and a whole-second Retry-After, marked no-store', async () => {
    const answer = await call('/limited');
    expect(answer.status).to.equal(429);
    expect(answer.headers.get('retry-after')).to.equal('3');
    expect(answer.headers.get('cache-control')).to.equal('no-store');
    expect(answer.body).to.deep.equal({ error: { code: 'RATE_LIMITED', message: 'slow down', requestId: answer.headers.get('x-request-id') } });
  });

  it('answers an unexpected error with a 500 that names no internals, and logs it with the request ID', async () => {
    const answer = await call('/bug');
    expect(answer.status).to.equal(500);
    expect(answer.body!.error.code).to.equal('RESPONSE_INVALID');
    expect(answer.text).not.to.contain('internal detail');
    expect(lines.find((l) => l.msg === 'unhandled error')).to.include({ requestId: answer.headers.get('x-request-id'), route: '/bug' });
  });

  it('answers an unknown path 404 and a known path with another method 405 with Allow, in the envelope', async () => {
    const missing = await call('/v1/nothing');
    expect(missing.status).to.equal(404);
    expect(missing.body!.error.code).to.equal('RESOURCE_NOT_FOUND');
    const wrong = await call('/v1/things/1', { method: 'PATCH' });
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.equal('GET, POST, DELETE');
    expect(wrong.body!.error.code).to.equal('REQUEST_INVALID');
    expect((await call('/limited', { method: 'POST' })).headers.get('allow')).to.equal('GET');
  });

  it('answers HEAD as GET, without the body', async () => {
    const head = await call('/v1/things/1', { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(head.text).to.equal('');
    expect(Number(head.headers.get('content-length'))).to.be.above(0);
  });

  it('marks every answer no-store: JSON, 404 and 405 alike', async () => {
    for (const [path, method] of [['/v1/things/1', 'GET'], ['/v1/things/1', 'POST'], ['/v1/nothing', 'GET'], ['/v1/things/1', 'DELETE']] as const) {
      expect((await call(path, { method })).headers.get('cache-control'), `${method} ${path}`).to.equal('no-store');
    }
  });

  it('lets a handler write its own answer and headers', async () => {
    const answer = await call('/raw');
    expect(answer.text).to.equal('raw answer');
    expect(answer.headers.get('cache-control')).to.equal('public, max-age=60');
    expect(answer.headers.get('x-request-id')).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('answers bad percent-encoding in a parameter with 400 SCOPE_INVALID', async () => {
    const answer = await call('/v1/things/%C0%AE');
    expect(answer.status).to.equal(400);
    expect(answer.body!.error.code).to.equal('SCOPE_INVALID');
  });

  it('writes one access line and one latency sample per request, with its ID and route template, never its headers', async () => {
    lines.length = 0;
    await call('/v1/things/1?cursor=secret-cursor', { headers: { authorization: 'Bearer secret-token-value', 'x-request-id': 'line-check' } });
    await new Promise((r) => setTimeout(r, 20));
    const access = lines.filter((l) => l.msg === 'request');
    expect(access).to.have.length(1);
    expect(access[0]).to.include({ requestId: 'line-check', route: '/v1/things/:thingId', status: 200, method: 'GET' });
    expect(JSON.stringify(lines)).not.to.contain('secret-token-value').and.not.to.contain('secret-cursor');
    const samples = (await registry.getSingleMetricAsString('test_http_duration')).split('\n');
    expect(samples.some((l) => l.startsWith('test_http_duration_count{operation="/v1/things/:thingId",method="GET",status="200"}'))).to.equal(true);
  });

  it('refuses a route declared twice, in one table or across two', () => {
    const again: RouteTable = { service: 'other', services, routes: [{ method: 'GET', path: '/V1/things/:thingId', access: 'public', handle: () => undefined }] };
    expect(() => createRoutePipeline([table, again])).to.throw(/GET \/V1\/things\/:thingId is declared by test and by other/);
    expect(() => createRoutePipeline([{ ...table, routes: [...table.routes, table.routes[0]!] }])).to.throw(/declared by test and by test/);
  });

  it('refuses a table with scoped routes but no access control', () => {
    const scoped: RouteTable = { service: 'scoped', services, routes: [{ method: 'GET', path: '/v1/repositories/:repositoryId/room', access: 'read', handle: () => undefined }] };
    expect(() => createRoutePipeline([scoped])).to.throw(/need an access control/);
  });

  it('refuses a table with principal routes whose access control does not decide on principals', () => {
    const decide = async () => ({});
    const principal: RouteTable = {
      service: 'principal',
      services: { ...services, access: { decide } },
      routes: [{ method: 'GET', path: '/v1/inbox', access: 'principal', handle: () => undefined }],
    };
    expect(() => createRoutePipeline([principal])).to.throw(/principal routes need an access control that decides on principals/);
    expect(() => createRoutePipeline([{ ...principal, services: { ...services, access: { decide, decidePrincipal: decide } } }])).not.to.throw();
  });

  describe('access control', () => {
    /** What the access control was asked, in order, and what the handlers were given. */
    const asked: string[] = [];
    const accessTable: RouteTable<{ room: string }, { readable: string[] }> = {
      service: 'access',
      services: {
        ...services,
        access: {
          async decide(request, action) {
            asked.push(`${action} ${request.params.repositoryId}`);
            if (request.headers.authorization !== 'Bearer good') throw new AppError('TOKEN_REJECTED', 'no');
            return { room: request.params.repositoryId! };
          },
          async decidePrincipal(request) {
            asked.push(`principal ${request.requestId}`);
            if (request.headers.authorization !== 'Bearer good') throw new AppError('TOKEN_REJECTED', 'no');
            return { readable: ['r1', 'r2'] };
          },
        },
      },
      routes: [
        { method: 'GET', path: '/v1/repositories/:repositoryId/room', access: 'read', handle: ({ room }) => ({ status: 200, body: { room } }) },
        { method: 'POST', path: '/v1/repositories/:repositoryId/room', access: 'write', body: 'json', handle: ({ room, body }) => ({ status: 200, body: { room, body } }) },
        { method: 'GET', path: '/v1/inbox', access: 'principal', handle: ({ readable }) => ({ status: 200, body: { readable } }) },
        { method: 'POST', path: '/v1/inbox/acknowledgements', access: 'principal', body: 'json', handle: ({ readable, body }) => ({ status: 200, body: { readable, body } }) },
        {
          method: 'GET',
          path: '/v1/inbox/events',
          access: 'principal',
          stream: true,
          handle: ({ res, readable }) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${readable.join(',')}\n\n`);
          },
        },
      ],
    };
    let accessServer: Server;
    let accessBase: string;

    before(async () => {
      accessServer = createServer(createRoutePipeline([accessTable]).listener).listen(0, '127.0.0.1');
      await once(accessServer, 'listening');
      accessBase = `http://127.0.0.1:${(accessServer.address() as AddressInfo).port}`;
    });
    after(() => {
      accessServer.closeAllConnections();
      accessServer.close();
    });
    beforeEach(() => {
      asked.length = 0;
    });

    async function ask(path: string, init: RequestInit = {}) {
      const response = await fetch(accessBase + path, init);
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    }
    const json = (authorization: string, body: string): RequestInit => ({ method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body });

    it('gives a principal route what decidePrincipal decided, and a room route what decide decided', async () => {
      const inbox = await ask('/v1/inbox', { headers: { authorization: 'Bearer good', 'x-request-id': 'feed-1' } });
      expect(inbox).to.deep.equal({ status: 200, body: { readable: ['r1', 'r2'] } });
      const room = await ask('/v1/repositories/R1/room', { headers: { authorization: 'Bearer good' } });
      expect(room).to.deep.equal({ status: 200, body: { room: 'R1' } });
      expect(asked).to.deep.equal(['principal feed-1', 'read R1']);
    });

    it('serves a principal stream route as a stream: the front may take it, HEAD is refused', async () => {
      const pipeline = createRoutePipeline([accessTable]);
      expect(pipeline.isStreamRoute('GET', '/v1/inbox/events')).to.equal(true);
      expect(pipeline.isStreamRoute('GET', '/v1/inbox')).to.equal(false);
      const stream = await fetch(`${accessBase}/v1/inbox/events`, { headers: { authorization: 'Bearer good' } });
      expect(await stream.text()).to.equal('data: r1,r2\n\n');
      const head = await fetch(`${accessBase}/v1/inbox/events`, { method: 'HEAD', headers: { authorization: 'Bearer good' } });
      expect(head.status).to.equal(405);
      expect(asked).to.deep.equal(['principal ' + stream.headers.get('x-request-id')]);
    });

    it('reads a principal route\'s JSON body only once its access is decided', async () => {
      const acknowledged = await ask('/v1/inbox/acknowledgements', json('Bearer good', '{"throughCursor":"c"}'));
      expect(acknowledged).to.deep.equal({ status: 200, body: { readable: ['r1', 'r2'], body: { throughCursor: 'c' } } });
      // A refused caller's malformed body is never read: the refusal is the answer.
      const refused = await ask('/v1/inbox/acknowledgements', json('Bearer bad', '{not json'));
      expect(refused.status).to.equal(401);
      expect(refused.body.error.code).to.equal('TOKEN_REJECTED');
      const unread = await ask('/v1/inbox/acknowledgements', json('Bearer good', '{not json'));
      expect(unread.status).to.equal(400);
      expect(asked.filter((a) => a.startsWith('principal'))).to.have.length(3);
      expect(asked.some((a) => a.startsWith('read') || a.startsWith('write'))).to.equal(false);
    });
  });
});
