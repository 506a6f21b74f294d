import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TracingConfig } from '@chat/service-config';
import { activeTracer } from './active-tracer.ts';
import { startCommitSpan } from './commit-span.ts';
import { startDeliverySpan, traceEventHandling } from './consumer-span.ts';
import { traceCoreCall } from './core-call-span.ts';
import { startPublishSpan, startRelaySpan } from './publish-span.ts';
import { startRequestSpan } from './request-span.ts';
import { startTracing } from './start-tracing.ts';

const silent = { info: () => undefined, warn: () => undefined };
/** What OpenTelemetry's API registers globally once an SDK starts (a provider, a context manager, a propagator). */
const otelGlobals = () => (globalThis as Record<symbol, Record<string, unknown> | undefined>)[Symbol.for('opentelemetry.js.api.1')] ?? {};
const config = (tracesUrl: string | undefined): TracingConfig => ({ tracesUrl, serviceName: 'chat-test', sampler: 'parentbased_traceidratio', samplerRatio: 1, exportDelayMs: 60_000 });

describe('startTracing', () => {
  it('with no traces URL starts no SDK, registers nothing, and every span point is a no-op', async () => {
    for (const off of [undefined, config(undefined)]) {
      const tracing = await startTracing(off, silent);
      expect(tracing.enabled).to.equal(false);
      expect(activeTracer()).to.equal(undefined);
      expect(Object.keys(otelGlobals()).filter((k) => k !== 'version')).to.deep.equal([]);
      expect(startRequestSpan({ method: 'GET', route: '/r', path: '/r', requestId: 'x', headers: { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` } })).to.equal(undefined);
      expect(startCommitSpan('append')).to.equal(undefined);
      expect(startPublishSpan('messages', 'R1', 1)).to.equal(undefined);
      expect(startRelaySpan(1)).to.equal(undefined);
      expect(startDeliverySpan({ channel: 'messages', scopeKey: 'R1', seq: 1, traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` })).to.equal(undefined);
      expect(await traceCoreCall('authorize', new URL('http://core'), async (span) => span)).to.equal(undefined);
      expect(await traceEventHandling({ channel: 'mentions', scopeKey: 'R1', seq: 1, traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` }, async () => 'ran', String)).to.equal('ran');
      await tracing.shutdown();
    }
  });

  describe('with a traces URL', () => {
    let receiver: Server;
    const bodies: Array<{ path: string; contentType: string; body: string }> = [];
    before(async () => {
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          bodies.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      receiver.listen(0, '127.0.0.1');
      await once(receiver, 'listening');
    });
    after(() => receiver.close());

    it('exports spans as OTLP/HTTP JSON under the service name, sends what is buffered at shutdown, then turns off', async () => {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
      const tracing = await startTracing(config(url), silent);
      expect(tracing.enabled).to.equal(true);
      const request = startRequestSpan({ method: 'POST', route: '/v1/x', path: '/v1/x', requestId: 'r1', headers: {} })!;
      request.within(() => startPublishSpan('messages', 'R1', 1)!.published(1));
      request.end(201);
      // The export delay is a minute: only shutdown sends these.
      expect(bodies).to.deep.equal([]);
      await tracing.shutdown();
      expect(activeTracer()).to.equal(undefined);
      expect(otelGlobals()).to.not.have.property('trace');
      expect(bodies.map((b) => [b.path, b.contentType])).to.deep.equal([['/v1/traces', 'application/json']]);
      const exported = JSON.parse(bodies[0]!.body) as {
        resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ name: string; traceId: string; spanId: string; parentSpanId?: string }> }> }>;
      };
      const [resource] = exported.resourceSpans;
      expect(resource!.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue).to.equal('chat-test');
      const spans = resource!.scopeSpans.flatMap((s) => s.spans);
      const server = spans.find((s) => s.name === 'POST /v1/x')!;
      const publish = spans.find((s) => s.name === 'publish messages')!;
      expect(publish.traceId).to.match(/^[0-9a-f]{32}$/).and.equal(server.traceId);
      expect(publish.parentSpanId).to.equal(server.spanId);
    });
  });
});
