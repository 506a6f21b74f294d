import { Cluster, Redis } from 'ioredis';
import { openRedisClient, withDeadline, type RedisClient, type RedisTarget } from '@chat/redis-client';

/** Where to find Redis (a connection of our own is opened), or a connection the caller owns. */
export type RedisTargetOrClient = RedisTarget | RedisClient;

/** A connection, whether closing it is ours to do, and how long a goodbye (QUIT) may take. */
export interface RedisHandle {
  readonly redis: RedisClient;
  readonly owned: boolean;
  readonly timeoutMs: number;
}

/** Borrows the caller's connection, or opens one of our own with the stream leases' profile. */
export function redisHandle(target: RedisTargetOrClient, name: string, timeoutMs: number): RedisHandle {
  if (target instanceof Redis || target instanceof Cluster) return { redis: target, owned: false, timeoutMs };
  return { redis: openRedisClient(target, { profile: 'stream-leases', name, timeoutMs }), owned: true, timeoutMs };
}

/**
 * Closes the connection if it is ours; a borrowed one is left to its owner. A Redis that does not
 * answer QUIT within the handle's timeout (a silent one) has its socket dropped instead.
 */
export async function releaseHandle(handle: RedisHandle): Promise<void> {
  if (!handle.owned) return;
  try {
    await withDeadline(handle.redis.quit(), handle.timeoutMs);
  } catch {
    handle.redis.disconnect();
  }
}
