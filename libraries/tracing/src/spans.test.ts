import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node';
import { expect } from 'chai';
import { parentOf, startInMemoryTracing, type InMemoryTracing } from './testing.ts';
import { startCommitSpan } from './commit-span.ts';
import { startDeliverySpan, traceEventHandling } from './consumer-span.ts';
import { traceCoreCall, type CoreCallSpan } from './core-call-span.ts';
import { startPublishSpan, startRelaySpan } from './publish-span.ts';
import { runUntraced } from './active-tracer.ts';
import { startRequestSpan } from './request-span.ts';
import { parseTraceparent } from './traceparent.ts';

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const serverRequest = (headers: Record<string, string> = {}) => ({
  method: 'POST',
  route: '/v1/repositories/:repositoryId/messages',
  path: '/v1/repositories/01J0000000000000000000000/messages',
  requestId: 'req-1',
  headers,
});

describe('spans (tracing on, spans kept in memory)', () => {
  let tracing: InMemoryTracing;
  beforeEach(() => {
    tracing = startInMemoryTracing();
  });
  afterEach(async () => {
    await tracing.stop();
  });

  it("names a request's server span by its route, continues the caller's traceparent, and records the status", () => {
    const span = startRequestSpan(serverRequest({ traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }))!;
    span.end(503);
    const server = tracing.span('POST /v1/repositories/:repositoryId/messages');
    expect(server.kind).to.equal(SpanKind.SERVER);
    expect(server.spanContext().traceId).to.equal(CALLER_TRACE);
    expect(parentOf(server)).to.equal(CALLER_SPAN);
    expect(server.attributes).to.deep.include({
      'http.request.method': 'POST',
      'http.route': '/v1/repositories/:repositoryId/messages',
      'url.path': '/v1/repositories/01J0000000000000000000000/messages',
      'chat.request_id': 'req-1',
      'http.response.status_code': 503,
      'error.type': '503',
    });
    expect(server.status.code).to.equal(SpanStatusCode.ERROR);
  });

  it("puts the core call, the commit and the publish under the request's span, and sends the core span's traceparent", async () => {
    const requestSpan = startRequestSpan(serverRequest())!;
    let sent: CoreCallSpan | undefined;
    await requestSpan.within(async () => {
      await traceCoreCall('authorize', new URL('http://core.internal:8081'), async (span) => {
        sent = span;
        span!.sharedBy(3);
      });
      const commit = startCommitSpan('append')!;
      commit.transactionStarted(2);
      commit.end('created', { roomId: 'R1', seq: 7 });
      startPublishSpan('messages', 'R1', 7)!.published(2);
    });
    requestSpan.end(201);
    const server = tracing.span('POST /v1/repositories/:repositoryId/messages');
    const core = tracing.span('core authorize');
    const commit = tracing.span('append commit');
    const publish = tracing.span('publish messages');
    for (const child of [core, commit, publish]) {
      expect(child.spanContext().traceId, child.name).to.equal(server.spanContext().traceId);
      expect(parentOf(child), child.name).to.equal(server.spanContext().spanId);
    }
    expect(parseTraceparent(sent!.traceparent)).to.include({ traceId: core.spanContext().traceId, spanId: core.spanContext().spanId });
    expect(core.kind).to.equal(SpanKind.CLIENT);
    expect(core.attributes).to.deep.include({ 'chat.core.operation': 'authorize', 'server.address': 'core.internal', 'server.port': 8081, 'chat.core.batch_size': 3 });
    expect(commit.attributes).to.deep.include({ 'chat.append.step': 'append', 'chat.append.batch_size': 2, 'chat.append.outcome': 'created', 'chat.scope_key': 'R1', 'chat.seq': 7 });
    expect(commit.events.map((e) => e.name)).to.deep.equal(['transaction started']);
    expect(publish.kind).to.equal(SpanKind.PRODUCER);
    expect(publish.attributes).to.deep.include({ 'messaging.destination.name': 'messages', 'messaging.batch.message_count': 2, 'chat.seq': 7 });
  });

  it("marks a failed core call with the error's code, never its message", async () => {
    const failure = Object.assign(new Error('token abc leaked into a message'), { code: 'AUTHORIZATION_UNAVAILABLE' });
    const request = startRequestSpan(serverRequest())!;
    await request
      .within(() =>
        traceCoreCall('authorize', new URL('https://core.example'), async () => {
          throw failure;
        }),
      )
      .catch(() => undefined);
    request.end(503);
    const core = tracing.span('core authorize');
    expect(core.status).to.deep.equal({ code: SpanStatusCode.ERROR });
    expect(core.attributes).to.include({ 'error.type': 'AUTHORIZATION_UNAVAILABLE', 'server.port': 443 });
    expect(JSON.stringify(core.attributes)).to.not.include('abc');
  });

  it("makes each consumer's span a child of the publish span the event names", async () => {
    const request = startRequestSpan(serverRequest())!;
    const publish = request.within(() => startPublishSpan('messages', 'R1', 7))!;
    request.end(201);
    const event = { channel: 'messages', scopeKey: 'R1', seq: 7, traceparent: publish.traceparent };
    publish.published(1);
    startDeliverySpan(event)!.delivered(2500);
    const result = await traceEventHandling(
      { ...event, channel: 'mentions' },
      () => traceCoreCall('resolveMentions', new URL('http://core:1'), async () => 'done'),
      (outcome) => outcome,
    );
    expect(result).to.equal('done');
    const producer = tracing.span('publish messages');
    const delivery = tracing.span('deliver messages');
    const processing = tracing.span('process mentions');
    for (const consumer of [delivery, processing]) {
      expect(consumer.kind).to.equal(SpanKind.CONSUMER);
      expect(consumer.spanContext().traceId).to.equal(producer.spanContext().traceId);
      expect(parentOf(consumer)).to.equal(producer.spanContext().spanId);
    }
    expect(delivery.attributes).to.deep.include({ 'chat.delivery.streams': 2500, 'chat.delivery.outcome': 'delivered', 'chat.scope_key': 'R1', 'chat.seq': 7 });
    expect(processing.attributes).to.include({ 'chat.process.outcome': 'done' });
    // The handler's calls run under its span.
    expect(parentOf(tracing.span('core resolveMentions'))).to.equal(processing.spanContext().spanId);
  });

  it('ends a delivery span once, however many ways the event goes, and makes none for an untraced event', () => {
    const publish = startRelaySpan(1)!;
    const delivery = startDeliverySpan({ channel: 'messages', scopeKey: 'R1', seq: 8, traceparent: publish.traceparent })!;
    delivery.skipped('late');
    delivery.delivered(3);
    expect(tracing.span('deliver messages').attributes).to.include({ 'chat.delivery.outcome': 'late', 'chat.delivery.streams': 0 });
    expect(startDeliverySpan({ channel: 'messages', scopeKey: 'R1', seq: 9 })).to.equal(undefined);
  });

  it('starts no core, commit or publish span outside traced work, nor inside runUntraced', async () => {
    expect(startCommitSpan('append')).to.equal(undefined);
    expect(startPublishSpan('notifications')).to.equal(undefined);
    expect(await traceCoreCall('authorize', new URL('http://core'), async (span) => span)).to.equal(undefined);
    const request = startRequestSpan(serverRequest())!;
    const [inside, untraced] = await request.within(async () => [startCommitSpan('append'), await runUntraced(async () => startCommitSpan('append'))]);
    request.end(201);
    expect(inside).to.not.equal(undefined);
    expect(untraced).to.equal(undefined);
  });

  it("starts the relay's publish as a trace of its own", () => {
    const requestSpan = startRequestSpan(serverRequest())!;
    requestSpan.within(() => startRelaySpan(4)!.published(5));
    requestSpan.end(200);
    const relay = tracing.span('relay outbox');
    expect(relay.parentSpanContext).to.equal(undefined);
    expect(relay.spanContext().traceId).to.not.equal(tracing.span('POST /v1/repositories/:repositoryId/messages').spanContext().traceId);
    expect(relay.attributes).to.include({ 'chat.outbox.entries': 4, 'messaging.batch.message_count': 5 });
  });
});

describe('spans under a parent-based ratio sampler', () => {
  let tracing: InMemoryTracing;
  before(() => {
    tracing = startInMemoryTracing(new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }));
  });
  after(async () => {
    await tracing.stop();
  });

  it("records no new trace at ratio 0, still carries its unsampled context, and follows a caller's sampled one", () => {
    const unsampled = startRequestSpan(serverRequest())!;
    let traceparent = '';
    unsampled.within(() => {
      const publish = startPublishSpan('messages', 'R1', 1)!;
      traceparent = publish.traceparent;
      publish.published(1);
    });
    unsampled.end(201);
    expect(tracing.spans()).to.deep.equal([]);
    expect(parseTraceparent(traceparent)?.traceFlags).to.equal(TraceFlags.NONE);
    startDeliverySpan({ channel: 'messages', scopeKey: 'R1', seq: 1, traceparent })!.delivered(1);
    expect(tracing.spans(), 'a delivery follows its publish: not sampled').to.deep.equal([]);

    startRequestSpan(serverRequest({ traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }))!.end(201);
    expect(tracing.spans().map((s) => s.spanContext().traceId)).to.deep.equal([CALLER_TRACE]);
  });
});
