import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** A Redis Cluster: seed nodes (any one leads to the rest) and the options of every node's connection. */
export interface RedisClusterTarget {
  clusterNodes: ReadonlyArray<{ host: string; port: number }>;
  /** Credentials, TLS and the like, for every node. */
  nodeOptions?: RedisOptions;
}

/**
 * Where to find Redis: a `redis://` URL, ioredis options (one node, or Sentinel through `sentinels`
 * and `name`) or a Cluster's seed nodes (a connection of our own each), or a connection the caller owns.
 */
export type RedisTarget = Redis | Cluster | string | RedisOptions | RedisClusterTarget;

/** A connection to one node (or Sentinel's current master) or to a Cluster. */
export type RedisClient = Redis | Cluster;

/** A connection and whether closing it is ours to do. */
export interface RedisHandle {
  readonly redis: RedisClient;
  readonly owned: boolean;
}

/**
 * The name a connection of ours shows in Redis's `CLIENT LIST`: the deployment's key prefix, the
 * role and the process, as the backbone names its own, so an operator can tell whose it is.
 */
export function connectionName(keyPrefix: string, role: string): string {
  return `${keyPrefix}:${role}:${process.pid}`.replace(/\s/g, '_');
}

/**
 * Opens (for a URL) or borrows (for an instance) a connection. Our own connections fail fast: a
 * command waits at most `timeoutMs`, and one queued while Redis is away is failed after one
 * reconnect attempt instead of piling up, because these counters answer a request that is waiting.
 */
export function redisHandle(target: RedisTarget, name: string, timeoutMs: number): RedisHandle {
  if (target instanceof Redis || target instanceof Cluster) return { redis: target, owned: false };
  const node: RedisOptions = {
    connectionName: name,
    connectTimeout: Math.max(timeoutMs, 500),
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
  };
  const retryStrategy = (times: number) => Math.min(times * 100, 2000);
  // Every append asks the rate limiter: commands issued in the same event-loop turn leave in one
  // write per node (none of these commands block).
  const shared = { enableOfflineQueue: true, enableAutoPipelining: true };
  let redis: RedisClient;
  if (typeof target === 'string') redis = new Redis(target, { ...node, ...shared, retryStrategy });
  else if ('clusterNodes' in target) {
    redis = new Cluster([...target.clusterNodes], {
      ...shared,
      redisOptions: { ...target.nodeOptions, ...node },
      clusterRetryStrategy: retryStrategy,
      slotsRefreshTimeout: Math.max(timeoutMs, 500),
      slotsRefreshInterval: 10_000,
    });
  } else redis = new Redis({ ...target, ...node, ...shared, retryStrategy });
  // Failures reach callers through their commands; without a listener ioredis prints every retry.
  redis.on('error', () => undefined);
  return { redis, owned: true };
}

/** Closes the connection if it is ours; a borrowed one is left to its owner. */
export async function releaseHandle(handle: RedisHandle): Promise<void> {
  if (!handle.owned) return;
  try {
    await handle.redis.quit();
  } catch {
    handle.redis.disconnect();
  }
}

/**
 * Races `work` against a deadline, so a paused or unreachable Redis costs the caller at most
 * `ms` even on a borrowed connection whose own timeouts we do not control.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`redis did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
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
