import { startInMemoryTracing, type InMemoryTracing } from '@chat/tracing/testing';
import { traceCoreCall } from '@chat/tracing';
import { AppError } from '@chat/contracts';
import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Histogram, Registry } from 'prom-client';
import { createRoutePipeline, type RouteTable } from './index.ts';

describe('the route pipeline with tracing on', () => {
  let tracing: InMemoryTracing;
  const services = {
    logger: pino({ level: 'silent' }),
    httpDuration: new Histogram({ name: 'trace_test_http_duration', help: 'h', labelNames: ['operation', 'method', 'status'], registers: [new Registry()] }),
  };
  const traced: RouteTable = {
    service: 'traced',
    services,
    traced: true,
    routes: [
      // A handler's own call (core's, here) runs in the request's span.
      { method: 'POST', path: '/v1/things/:thingId', access: 'public', handle: () => traceCoreCall('authorize', new URL('http://core'), async () => ({ status: 201, body: {} })) },
      {
        method: 'GET',
        path: '/v1/broken',
        access: 'public',
        handle: () => {
          throw new AppError('STORE_UNAVAILABLE', 'down');
        },
      },
    ],
  };
  const untraced: RouteTable = { service: 'untraced', services, routes: [{ method: 'GET', path: '/v1/page', access: 'public', handle: () => ({ status: 200, body: {} }) }] };
  let server: Server;
  let base: string;

  before(async () => {
    tracing = startInMemoryTracing();
    server = createServer(createRoutePipeline([traced, untraced]).listener).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await tracing.stop();
  });
  beforeEach(() => tracing.reset());

  /** The spans, once the server has ended them (at the response's close). */
  async function spans(count: number) {
    for (let i = 0; i < 50 && tracing.spans().length < count; i++) await new Promise((r) => setTimeout(r, 10));
    return tracing.spans();
  }

  it("gives a traced table's request a server span named by its route, in the caller's trace, with its calls as children", async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const response = await fetch(`${base}/v1/things/t1?cursor=secret`, { method: 'POST', headers: { traceparent, 'x-request-id': 'req-7' } });
    expect(response.status).to.equal(201);
    const [core, server] = await spans(2);
    expect(server!.name).to.equal('POST /v1/things/:thingId');
    expect(server!.spanContext().traceId).to.equal('0af7651916cd43dd8448eb211c80319c');
    expect(server!.parentSpanContext?.spanId).to.equal('b7ad6b7169203331');
    expect(server!.attributes).to.deep.include({ 'http.route': '/v1/things/:thingId', 'url.path': '/v1/things/t1', 'chat.request_id': 'req-7', 'http.response.status_code': 201 });
    expect(JSON.stringify(server!.attributes), 'the query may hold a cursor').to.not.include('secret');
    expect(core!.parentSpanContext?.spanId).to.equal(server!.spanContext().spanId);
  });

  it('records an error answer on the span, and leaves untraced tables without spans', async () => {
    expect((await fetch(`${base}/v1/broken`)).status).to.equal(503);
    expect((await fetch(`${base}/v1/page`)).status).to.equal(200);
    const answered = await spans(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(tracing.spans().map((s) => [s.name, s.attributes['http.response.status_code']])).to.deep.equal([['GET /v1/broken', 503]]);
    expect(answered[0]!.status.code).to.equal(2);
  });
});
