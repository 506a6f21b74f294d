import type { Backbone } from './backbone.ts';
import { InProcessBackbone } from './in-process/in-process-backbone.ts';
import { RedisStreamsBackbone } from './redis/redis-streams-backbone.ts';

export interface BackboneTarget {
  /** Redis URL; unset means the in-process backbone (one process only). */
  redisUrl?: string | undefined;
  /** First segment of every key. @defaultValue 'chat' */
  keyPrefix?: string;
}

/** The backbone every process picks the same way: Redis Streams when Redis is configured. */
export function createBackbone(target: BackboneTarget): Backbone {
  if (!target.redisUrl) return new InProcessBackbone();
  return new RedisStreamsBackbone({ redis: target.redisUrl, ...(target.keyPrefix ? { keyPrefix: target.keyPrefix } : {}) });
}
