import type { Backbone } from './backbone.ts';
import { InProcessBackbone } from './in-process/in-process-backbone.ts';
import { RedisStreamsBackbone } from './redis/redis-streams-backbone.ts';
import type { RedisTarget } from '@chat/redis-client';

export interface BackboneTarget {
  /** Redis (a URL, ioredis options or a Cluster); unset means the in-process backbone (one process only). */
  redis?: RedisTarget | undefined;
  /** First segment of every key. @defaultValue 'chat' */
  keyPrefix?: string;
}

/** The backbone every process picks the same way: Redis Streams when Redis is configured. */
export function createBackbone(target: BackboneTarget): Backbone {
  if (!target.redis) return new InProcessBackbone();
  return new RedisStreamsBackbone({ redis: target.redis, ...(target.keyPrefix ? { keyPrefix: target.keyPrefix } : {}) });
}
