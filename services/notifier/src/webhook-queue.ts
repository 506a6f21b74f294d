import type { Logger } from '@chat/observability';
import { connectionName, openRedisClient, redisTargetOf } from '@chat/redis-client';
import type { RedisConfig } from '@chat/service-config';
import { BullmqLaneQueue, type LaneQueue } from '@chat/webhooks';
import type { WebhookSettings } from './runtime.ts';

/**
 * The webhook lane queue of a notifier on Redis: BullMQ's keys under `<REDIS_KEY_PREFIX>:` like the
 * service's others, with the hash tag `{<REDIS_KEY_PREFIX>:webhooks}`, so on a Redis Cluster every
 * key of the queue shares a slot, as BullMQ's scripts need.
 */
export function bullmqWebhookQueue(redis: RedisConfig): (settings: WebhookSettings, logger: Logger) => LaneQueue {
  const target = redisTargetOf(redis);
  if (!target) throw new Error('the BullMQ webhook queue needs REDIS_URL');
  return (settings, logger) =>
    new BullmqLaneQueue({
      connect: () => openRedisClient(target, { profile: 'job-queue', name: connectionName(redis.keyPrefix, 'webhooks'), timeoutMs: 2000 }),
      prefix: `${redis.keyPrefix}:{${redis.keyPrefix}:webhooks}`,
      concurrency: settings.concurrency,
      onError: (err) => logger.warn({ err }, 'webhook queue trouble'),
    });
}
