import { startInMemoryTracing, type InMemoryTracing } from '@chat/tracing/testing';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { parseTraceparent, startRequestSpan } from '@chat/tracing';
import { expect } from 'chai';
import { pino } from 'pino';
import { createCoreClient } from './core-client.ts';
import { createCoreTransport, type CoreTransport } from './core-transport.ts';

const SERVICE_TOKEN = 'authz-client-trace-test-token';
const REPO = '01JGFJJZ00QNYBVPQTAT49MN0F';
const alice = { kind: 'user' as const, id: 'u_alice', tokenId: 'jti-u_alice', clientId: 'dev-core-demo-app' };

/** The real transport, keeping each call's path and traceparent header. */
function recordingTransport(): { transport: CoreTransport; sent: Array<{ path: string; traceparent: string | undefined }> } {
  const real = createCoreTransport();
  const sent: Array<{ path: string; traceparent: string | undefined }> = [];
  return {
    sent,
    transport: {
      send(url, init) {
        sent.push({ path: url.pathname, traceparent: init.headers?.traceparent });
        return real.send(url, init);
      },
      close: () => real.close(),
    },
  };
}

describe("core calls' client spans and the traceparent sent to core (against dev-core)", () => {
  let core: DevCoreHandle;
  let tracing: InMemoryTracing;

  before(async () => {
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: pino({ level: 'silent' }) });
  });
  after(() => core.close());

  describe('tracing on', () => {
    before(() => {
      tracing = startInMemoryTracing();
    });
    after(async () => {
      await tracing.stop();
    });
    beforeEach(() => tracing.reset());

    it("makes an authorization a child span of the request and sends core that span's traceparent", async () => {
      const { transport, sent } = recordingTransport();
      const client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, transport });
      const request = startRequestSpan({ method: 'GET', route: '/r', path: '/r', requestId: 'req-1', headers: {} })!;
      const decision = await request.within(() => client.authorize({ principal: alice, repositoryId: REPO, action: 'read' }, { requestId: 'req-1' }));
      request.end(200);
      expect(decision.decision).to.equal('allow');
      const span = tracing.spans().find((s) => s.name === 'core authorize')!;
      const server = tracing.spans().find((s) => s.name === 'GET /r')!;
      expect(span.parentSpanContext?.spanId).to.equal(server.spanContext().spanId);
      expect(span.attributes).to.include({ 'chat.core.operation': 'authorize', 'server.address': '127.0.0.1' });
      expect(sent).to.have.length(1);
      expect(parseTraceparent(sent[0]!.traceparent!)).to.include({ traceId: server.spanContext().traceId, spanId: span.spanContext().spanId });
      await transport.close();
    });

    it('sends one traceparent on a shared call, and every authorization it carried says how many it carried', async () => {
      const { transport, sent } = recordingTransport();
      const client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, transport });
      const requests = Array.from({ length: 12 }, (_, i) => startRequestSpan({ method: 'GET', route: '/r', path: '/r', requestId: `req-${i}`, headers: {} })!);
      await Promise.all(requests.map((r) => r.within(() => client.authorize({ principal: alice, repositoryId: REPO, action: 'read' }))));
      requests.forEach((r) => r.end(200));
      const spans = tracing.spans().filter((s) => s.name === 'core authorize');
      expect(spans).to.have.length(12);
      const batches = sent.filter((s) => s.path.endsWith('/batch'));
      expect(batches.length, 'at least one shared call').to.be.at.least(1);
      for (const call of sent) {
        const carried = parseTraceparent(call.traceparent!)!;
        expect(spans.some((s) => s.spanContext().spanId === carried.spanId), 'the traceparent of one of its authorizations').to.equal(true);
      }
      const shared = spans.filter((s) => (s.attributes['chat.core.batch_size'] as number) > 1);
      expect(shared.length).to.equal(batches.length === 0 ? 0 : 12 - (sent.length - batches.length));
      await transport.close();
    });
  });

  it('sends no traceparent while tracing is off', async () => {
    const { transport, sent } = recordingTransport();
    const client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, transport });
    await client.authorize({ principal: alice, repositoryId: REPO, action: 'read' });
    await client.resolveMentions({ repositoryId: REPO, targets: [] }).catch(() => undefined);
    expect(sent.map((s) => s.traceparent)).to.deep.equal([undefined, undefined]);
    await transport.close();
  });
});
