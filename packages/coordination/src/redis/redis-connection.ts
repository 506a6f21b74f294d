import { Redis } from 'ioredis';

/** Where to find Redis: a `redis://` URL (a connection of our own) or a connection the caller owns. */
export type RedisTarget = Redis | string;

/** A connection and whether closing it is ours to do. */
export interface RedisHandle {
  readonly redis: Redis;
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
  if (typeof target !== 'string') return { redis: target, owned: false };
  const redis = new Redis(target, {
    connectionName: name,
    connectTimeout: Math.max(timeoutMs, 500),
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    retryStrategy: (times: number) => Math.min(times * 100, 2000),
    // Every append asks the rate limiter: commands issued in the same event-loop turn leave in one
    // write (none of these commands block).
    enableAutoPipelining: true,
  });
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
