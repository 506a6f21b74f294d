import { startInMemoryTracing, type InMemoryTracing } from '@chat/tracing/testing';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { startRelaySpan } from '@chat/tracing';
import type { MessageRow } from '@chat/store';
import { messageJson } from '@chat/wire-format';
import { expect } from 'chai';
import { GatewayHarness, roomEventsPath } from '../../test/gateway-harness.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

/**
 * A gateway's delivery spans (tracing on): one per traced event and gateway, however many of its
 * streams the event goes to, a child of the publish span the event names.
 */
describe('stream hub: delivery spans', function () {
  this.timeout(60_000);
  let tracing: InMemoryTracing;
  const h = new GatewayHarness({ target: 'pglite+in-process', repositories: 4 });
  const clients: SseClient[] = [];

  before(async () => {
    await h.start();
    tracing = startInMemoryTracing();
  });
  after(async () => {
    for (const client of clients) client.close();
    await tracing.stop();
    await h.stop();
  });
  beforeEach(() => tracing.reset());

  /** Publishes a committed message as the outbox relay does, under a publish span; answers that span's ID. */
  async function publishTraced(row: MessageRow): Promise<string> {
    const publish = startRelaySpan(1)!;
    await h.backbone.publish([{ channel: 'messages', scopeKey: row.roomId, seq: row.seq, data: messageJson(row), traceparent: publish.traceparent }]);
    publish.published(1);
    return publish.traceparent.split('-')[2]!;
  }

  async function openStreams(count: number, repositoryId: string): Promise<SseClient[]> {
    const token = await h.token();
    const opened = await Promise.all(Array.from({ length: count }, () => openSse(h.url, roomEventsPath(repositoryId), token)));
    clients.push(...opened);
    return opened;
  }

  const deliveries = (): ReadableSpan[] => tracing.spans().filter((s) => s.name === 'deliver messages');

  it("makes one span per event for all of the gateway's streams of its room, under the publish span", async () => {
    const repository = h.repository();
    const scope = { repositoryId: repository.id, branchId: null };
    await h.append(scope, 'first');
    const streams = await openStreams(3, repository.id);
    for (const stream of streams) await stream.waitForMessages(1);
    const row = await h.append(scope, 'second', { publish: false });
    const publishSpanId = await publishTraced(row);
    for (const stream of streams) await stream.waitForMessages(2);
    const [delivery] = deliveries();
    expect(deliveries()).to.have.length(1);
    expect(delivery!.parentSpanContext?.spanId).to.equal(publishSpanId);
    expect(delivery!.attributes).to.deep.include({ 'chat.delivery.streams': 3, 'chat.delivery.outcome': 'delivered', 'chat.scope_key': row.roomId, 'chat.seq': row.seq });
  });

  it('keeps the span of an event held for a missing one until it goes out, ends a repeat as late, and makes none for an untraced event', async () => {
    const repository = h.repository();
    const scope = { repositoryId: repository.id, branchId: null };
    await h.append(scope, 'first');
    const [stream] = await openStreams(1, repository.id);
    await stream!.waitForMessages(1);
    const second = await h.append(scope, 'second', { publish: false });
    const third = await h.append(scope, 'third', { publish: false });
    await publishTraced(third);
    await h.publish(second);
    await stream!.waitForMessages(3);
    await publishTraced(third);
    await new Promise((r) => setTimeout(r, 100));
    expect(deliveries().map((s) => [s.attributes['chat.seq'], s.attributes['chat.delivery.outcome'], s.attributes['chat.delivery.streams']])).to.deep.equal([
      [third.seq, 'delivered', 1],
      [third.seq, 'late', 0],
    ]);
  });
});
