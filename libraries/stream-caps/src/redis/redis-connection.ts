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

/**
 * The name a connection of ours shows in Redis's `CLIENT LIST`: the deployment's key prefix, the
 * role and the process, as the backbone names its own, so an operator can tell whose it is.
 */
export function connectionName(keyPrefix: string, role: string): string {
  return `${keyPrefix}:${role}:${process.pid}`.replace(/\s/g, '_');
}

/**
 * Opens (for a target) or borrows (for a connection) a connection. Our own connections fail fast: a
 * command queued while Redis is away is failed after one reconnect attempt instead of piling up,
 * because these leases answer a request that is waiting. Commands issued in one event-loop turn
 * leave in one write per node: lease renewals go out side by side.
 */
export function redisHandle(target: RedisTargetOrClient, name: string, timeoutMs: number): RedisHandle {
  if (target instanceof Redis || target instanceof Cluster) return { redis: target, owned: false, timeoutMs };
  const redis = openRedisClient(target, {
    connectionName: name,
    connectTimeoutMs: Math.max(timeoutMs, 500),
    commandTimeoutMs: timeoutMs,
    maxRetriesPerRequest: 1,
    offlineQueue: true,
    autoPipelining: true,
    slotsRefreshIntervalMs: 10_000,
  });
  return { redis, owned: true, timeoutMs };
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

/**
 * Settles commands sent side by side (on a Cluster, each to the node of its key; with auto-
 * pipelining they leave in one write per node) within `ms`; returns the failures.
 */
export async function settleWithin(work: Array<Promise<unknown>>, ms: number): Promise<unknown[]> {
  const results = await withDeadline(Promise.allSettled(work), ms);
  return results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
}
