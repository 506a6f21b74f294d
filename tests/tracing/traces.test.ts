/**
 * OpenTelemetry traces across the distributed deployment (docs/operations.md, Tracing): separate API,
 * stream gateway and notifier processes on PostgreSQL, Redis and dev-core, exporting to a small
 * OTLP/HTTP receiver this test runs. One append made while a room stream is open is one trace: the
 * API's server span (continuing the caller's traceparent), core's authorization, the commit, the
 * publish, the gateway's delivery and the notifier's fanout, each parented as designed. Without an
 * endpoint no SDK starts, nothing is exported, and the backbone's events carry no trace.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ulid } from 'ulid';
import type { InboxPageResponse, MessageResponse } from '@chat/contracts';
import { ApiClient, roomPath } from '../harness/api-client.ts';
import { canListen } from '../harness/free-port.ts';
import { startOtlpReceiver, type ExportedSpan, type OtlpReceiver } from '../harness/otlp-receiver.ts';
import { openSse, type SseConnection } from '../harness/sse-stream.ts';
import { Actors } from '../harness/stacks.ts';
import { testConfig } from '../harness/test-config.ts';
import { eventually, startLifecycleWorld, terminate, type LifecycleWorld, type ServiceProcess } from '../lifecycle/service-processes.ts';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const OTLP = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

/** Byte span of `mention` inside `body`. */
const spanOf = (body: string, mention: string) => {
  const start = Buffer.byteLength(body.slice(0, body.indexOf(mention)), 'utf8');
  return { startByte: start, endByte: start + Buffer.byteLength(mention, 'utf8') };
};

/** Every entry of the world's `messages` streams in Redis, as field records. */
async function messageEntries(prefix: string): Promise<Array<Record<string, string>>> {
  const redis = new Redis(testConfig.redisUrl);
  try {
    const keys = await redis.keys(`${prefix}:{messages:*}:stream`);
    const entries: Array<Record<string, string>> = [];
    for (const key of keys) {
      for (const [, fields] of await redis.xrange(key, '-', '+')) {
        const entry: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) entry[fields[i]!] = fields[i + 1]!;
        entries.push(entry);
      }
    }
    return entries;
  } finally {
    redis.disconnect();
  }
}

/** One append that mentions the reader, made while the reader's room stream is open; the stream has it when this resolves. */
async function appendWhileStreaming(world: LifecycleWorld, api: ServiceProcess, gateway: ServiceProcess, headers: Record<string, string>) {
  const scenario = await world.fixture.scenario();
  const actors = new Actors(world.core, scenario);
  const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
  const client = new ApiClient(api.url);
  const stream: SseConnection = await openSse(`${gateway.url}${roomPath(scope)}/events`, await actors.reader());
  expect(stream.status).to.equal(200);
  const target = scenario.users.reader;
  const body = `traced hello to @${target}`;
  const answer = await client.send<MessageResponse>({
    method: 'POST',
    path: `${roomPath(scope)}/messages`,
    headers: {
      authorization: `Bearer ${await actors.writer()}`,
      'idempotency-key': ulid(),
      'x-service-core-authorization': `Bearer ${await actors.coreResource()}`,
      ...headers,
    },
    json: { bodyMarkdown: body, mentions: [{ principalKind: 'human', principalId: target, ...spanOf(body, `@${target}`) }] },
  });
  expect(answer.status, answer.text).to.equal(201);
  const message = answer.body;
  await eventually('the open stream to deliver the message', () => stream.events.some((e) => e.event === 'message' && (JSON.parse(e.data) as MessageResponse).messageId === message.messageId), 15_000, 50);
  stream.close();
  const inbox = async () =>
    (await client.send<InboxPageResponse>({ method: 'GET', path: `/v1/repositories/${scenario.repositoryId}/inbox`, headers: { authorization: `Bearer ${await actors.reader()}` } })).body.items;
  await eventually("the mention to reach the reader's inbox", async () => (await inbox()).some((n) => n.messageId === message.messageId), 30_000, 200);
  client.close();
  return message;
}

describe('tracing: one trace per append across the API, core, the commit, the publish and the gateway', function () {
  this.timeout(180_000);
  let world: LifecycleWorld;
  let receiver: OtlpReceiver;
  let services: ServiceProcess[];

  before(async () => {
    receiver = await startOtlpReceiver();
    world = await startLifecycleWorld();
    // A minute's export delay: the spans asserted below leave at SIGTERM, which must send them.
    const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '60000' };
    services = await Promise.all([
      world.startApi('api', tracing),
      world.startGateway('gateway', { ...tracing, GATEWAY_DRAIN_MS: '200' }),
      world.startNotifier('notifier', { ...tracing, NOTIFIER_SWEEP_GRACE_MS: '60000' }),
    ]);
  });
  after(async () => {
    await world?.stop();
    await receiver?.close();
  });

  it('joins every span of the append under the caller\'s trace ID, flushed at SIGTERM', async () => {
    const [api, gateway, notifier] = services as [ServiceProcess, ServiceProcess, ServiceProcess];
    for (const service of services) expect(service.service.log).to.match(/tracing on: spans exported by OTLP\/HTTP/);
    const message = await appendWhileStreaming(world, api, gateway, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(receiver.requests, 'nothing exported before the export delay or a shutdown').to.equal(0);

    const entry = (await messageEntries(world.prefix)).find((e) => e.data !== undefined && (JSON.parse(e.data) as MessageResponse).messageId === message.messageId);
    expect(entry?.traceparent, "the backbone event carries its publish span's traceparent").to.match(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));

    for (const service of [gateway, notifier, api]) expect((await terminate(service)).code, `${service.name} exits 0`).to.equal(0);

    const trace = receiver.spans().filter((s) => s.traceId === CALLER_TRACE);
    const one = (name: string, service: string): ExportedSpan => {
      const found = trace.filter((s) => s.name === name && s.service === service);
      expect(found, `${name} in ${service}: ${trace.map((s) => `${s.service}/${s.name}`).join(', ')}`).to.have.length(1);
      return found[0]!;
    };
    const route = '/v1/repositories/:repositoryId/branches/:branchId/room/messages';
    const server = one(`POST ${route}`, 'chat-api');
    expect(server).to.deep.include({ kind: OTLP.SERVER, parentSpanId: CALLER_SPAN });
    expect(server.attributes).to.include({ 'http.request.method': 'POST', 'http.response.status_code': 201, 'http.route': route });

    const authorize = one('core authorize', 'chat-api');
    const hold = one('append hold', 'chat-api');
    const mentionLookup = one('core resolveMentions', 'chat-api');
    const commit = one('append commit', 'chat-api');
    const publish = one('publish messages', 'chat-api');
    for (const child of [authorize, hold, mentionLookup, commit, publish]) expect(child.parentSpanId, child.name).to.equal(server.spanId);
    expect(authorize.kind).to.equal(OTLP.CLIENT);
    expect(commit.attributes).to.include({ 'chat.append.outcome': 'created', 'chat.scope_key': message.roomId });
    expect(commit.attributes['chat.append.batch_size']).to.be.at.least(1);
    expect(commit.events).to.deep.equal(['transaction started']);
    expect(publish).to.deep.include({ kind: OTLP.PRODUCER });
    expect(entry!.traceparent!.split('-')[2], "the event's traceparent names the publish span").to.equal(publish.spanId);

    const delivery = one('deliver messages', 'chat-stream-gateway');
    expect(delivery).to.deep.include({ kind: OTLP.CONSUMER, parentSpanId: publish.spanId });
    expect(delivery.attributes).to.include({ 'chat.delivery.streams': 1, 'chat.delivery.outcome': 'delivered', 'chat.scope_key': message.roomId });

    const fanout = one('process mentions', 'chat-notifier');
    expect(fanout).to.deep.include({ kind: OTLP.CONSUMER, parentSpanId: publish.spanId });
    expect(fanout.attributes['chat.process.outcome']).to.equal('done');
    const notifierCore = trace.filter((s) => s.service === 'chat-notifier' && s.name.startsWith('core '));
    expect(notifierCore.length, "the fanout's calls to core").to.be.at.least(1);
    for (const call of notifierCore) expect(call.parentSpanId).to.equal(fanout.spanId);
    expect(one('publish notifications', 'chat-notifier').parentSpanId).to.equal(fanout.spanId);

    // Every span of the trace hangs off the caller's span, through the server span.
    const ids = new Set([CALLER_SPAN, ...trace.map((s) => s.spanId)]);
    for (const span of trace) expect(ids.has(span.parentSpanId!), `${span.name}'s parent is in the trace`).to.equal(true);
  });
});

describe('tracing: off without an endpoint', function () {
  this.timeout(180_000);
  let world: LifecycleWorld;
  let services: ServiceProcess[];
  let defaultAddress: OtlpReceiver | undefined;

  before(async () => {
    // OTLP/HTTP's default address: an SDK started with no endpoint would export here.
    if (await canListen(4318)) defaultAddress = await startOtlpReceiver(4318, '127.0.0.1');
    world = await startLifecycleWorld();
    // The other OpenTelemetry settings set, the endpoint not: still off.
    const settings = { OTEL_SERVICE_NAME: 'chat-untraced', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '100' };
    services = await Promise.all([
      world.startApi('api', settings),
      world.startGateway('gateway', { ...settings, GATEWAY_DRAIN_MS: '200' }),
      world.startNotifier('notifier', settings),
    ]);
  });
  after(async () => {
    await world?.stop();
    await defaultAddress?.close();
  });

  it('starts no SDK, exports nothing and puts no trace in the backbone events, a caller\'s traceparent notwithstanding', async () => {
    const [api, gateway] = services as [ServiceProcess, ServiceProcess, ServiceProcess];
    const message = await appendWhileStreaming(world, api, gateway, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    const entries = await messageEntries(world.prefix);
    expect(entries.some((e) => e.data !== undefined && (JSON.parse(e.data) as MessageResponse).messageId === message.messageId)).to.equal(true);
    for (const entry of entries) expect(Object.keys(entry).sort()).to.deep.equal(['data', 'scopeKey', 'seq']);
    await new Promise((r) => setTimeout(r, 500));
    for (const service of services) {
      expect((await terminate(service)).code, `${service.name} exits 0`).to.equal(0);
      expect(service.service.log).to.not.match(/tracing on|opentelemetry/i);
    }
    if (defaultAddress) expect(defaultAddress.requests, 'exports to the OTLP default address').to.equal(0);
  });
});
