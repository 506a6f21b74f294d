import type { StreamCapOptions, StreamLeaseRegistry } from './stream-lease-registry.ts';
import { InProcessStreamLeaseRegistry } from './in-process-stream-lease-registry.ts';
import { RedisStreamLeaseRegistry } from './redis-stream-lease-registry.ts';
import type { RedisTargetOrClient } from '../redis/redis-handle.ts';

/**
 * Stream caps shared through Redis when Redis is configured (every gateway counts in the same sets),
 * else held in this process.
 */
export function createStreamLeaseRegistry(options: StreamCapOptions & { redis?: RedisTargetOrClient | undefined; keyPrefix?: string; onError?: (err: unknown) => void }): StreamLeaseRegistry {
  const { redis, keyPrefix, onError, ...caps } = options;
  if (!redis) return new InProcessStreamLeaseRegistry(caps);
  return new RedisStreamLeaseRegistry({ redis, ...(keyPrefix ? { keyPrefix } : {}), ...(onError ? { onError } : {}), ...caps });
}
