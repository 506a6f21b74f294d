import { InProcessBackbone, RedisStreamsBackbone, type Backbone, type DeliveredEvent } from '@chat/backbone';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { parentOf, startInMemoryTracing, type InMemoryTracing } from './testing.ts';
import { startDeliverySpan } from './consumer-span.ts';
import { startPublishSpan } from './publish-span.ts';
import { startRequestSpan } from './request-span.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-tracing-${randomUUID().slice(0, 8)}`;

/**
 * The trace context's trip through each backbone: a publish span's traceparent goes into the event,
 * comes out of a subscription, and the gateway's delivery span is its child; an event without one
 * (an untraced or older publisher's) is delivered as before and makes no span.
 */
for (const [name, open, cleanup] of [
  ['in-process backbone', async () => new InProcessBackbone(), async () => undefined],
  [
    'Redis Streams backbone',
    async () => new RedisStreamsBackbone({ redis: REDIS_URL, keyPrefix: prefix, subscribeBlockMs: 200 }),
    async () => {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  ],
] as const) {
  describe(`trace context through the ${name}`, () => {
    let tracing: InMemoryTracing;
    let backbone: Backbone;
    before(async () => {
      tracing = startInMemoryTracing();
      backbone = await open();
    });
    after(async () => {
      await backbone.close();
      await cleanup();
      await tracing.stop();
    });

    it("parents the delivery of a published event by its publish span, in its request's trace", async () => {
      const received: DeliveredEvent[] = [];
      const subscription = await backbone.subscribe('messages', (e) => received.push(e));
      const request = startRequestSpan({ method: 'POST', route: '/v1/x', path: '/v1/x', requestId: 'r', headers: {} })!;
      const publish = request.within(() => startPublishSpan('messages', 'R1', 1))!;
      await backbone.publish([
        { channel: 'messages', scopeKey: 'R1', seq: 1, data: '{"n":1}', traceparent: publish.traceparent },
        { channel: 'messages', scopeKey: 'R1', seq: 2, data: '{"n":2}' },
      ]);
      publish.published(2);
      request.end(201);
      for (let i = 0; i < 100 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(received.map((e) => e.data)).to.deep.equal(['{"n":1}', '{"n":2}']);
      for (const event of received) startDeliverySpan(event)?.delivered(1);
      await subscription.close();

      const server = tracing.span('POST /v1/x');
      const delivery = tracing.span('deliver messages');
      expect(delivery.spanContext().traceId).to.equal(server.spanContext().traceId);
      expect(parentOf(delivery)).to.equal(tracing.span('publish messages').spanContext().spanId);
      expect(delivery.attributes).to.include({ 'chat.seq': 1 });
      expect(received[1]).to.not.have.property('traceparent');
    });
  });
}
