import type { StreamCapOptions, StreamLeaseRegistry } from './stream-lease-registry.ts';
import { InProcessStreamLeaseRegistry } from './in-process-stream-lease-registry.ts';
import { RedisStreamLeaseRegistry } from './redis-stream-lease-registry.ts';

/**
 * Stream caps shared through Redis when Redis is configured (every gateway counts in the same sets),
 * else held in this process.
 */
export function createStreamLeaseRegistry(options: StreamCapOptions & { redisUrl?: string | undefined; keyPrefix?: string; onError?: (err: unknown) => void }): StreamLeaseRegistry {
  const { redisUrl, keyPrefix, onError, ...caps } = options;
  if (!redisUrl) return new InProcessStreamLeaseRegistry(caps);
  return new RedisStreamLeaseRegistry({ redis: redisUrl, ...(keyPrefix ? { keyPrefix } : {}), ...(onError ? { onError } : {}), ...caps });
}
