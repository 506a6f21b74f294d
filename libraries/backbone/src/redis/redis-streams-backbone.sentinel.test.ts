import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { RedisSentinel } from '../../../../tests/harness/redis-sentinel.ts';
import type { DeliveredEvent } from '../backbone.ts';
import { events, waitFor } from '../../test/backbone-contract.ts';
import { RedisStreamsBackbone } from './redis-streams-backbone.ts';

describe('RedisStreamsBackbone through Sentinel', function () {
  this.timeout(30_000);
  let sentinel: RedisSentinel;
  before(async () => {
    sentinel = await RedisSentinel.start();
  });
  after(async () => {
    await sentinel?.stop();
  });

  it('finds the primary through the sentinel and carries events, live and through a consumer group', async () => {
    const backbone = new RedisStreamsBackbone({ redis: { sentinels: sentinel.sentinels, name: sentinel.name }, keyPrefix: `test-${randomUUID().slice(0, 8)}`, subscribeBlockMs: 500 });
    try {
      const live: DeliveredEvent[] = [];
      const grouped: DeliveredEvent[] = [];
      const subscription = await backbone.subscribe('messages', (e) => live.push(e));
      const consumer = await backbone.consume({ channel: 'messages', group: 'g', consumer: 'c', blockMs: 100 }, async (e) => {
        grouped.push(e);
      });
      await backbone.publish(events('messages', 'room-1', 1, 5));
      await waitFor(() => live.length === 5 && grouped.length === 5, 10_000, 'events through the primary');
      expect(live.map((e) => e.seq)).to.deep.equal([1, 2, 3, 4, 5]);
      await subscription.close();
      await consumer.stop();
    } finally {
      await backbone.close();
    }
  });
});
