import type { ChainableCommander } from 'ioredis';
import { AppError } from '@chat/contracts';
import { openRedisClient, withDeadline, type RedisClient, type RedisTarget } from '@chat/redis-client';

/**
 * Opens a connection tuned to fail fast: nothing is silently re-sent after a reconnect, because a
 * late duplicate write is worse here than a clear error the caller can retry. Every command is
 * raced against a deadline by its caller ({@link withDeadlineOrReconnect}, which starts before the
 * command is issued and also drops a silent connection), so the connection sets no per-command
 * timeout of its own: that second timer would never fire first and costs ~5 µs of CPU per command.
 * Blocking readers fail at once while disconnected (no offline queue) and re-read the Cluster slot
 * map rarely: MOVED and connection loss refresh it at once, the timer only catches quiet changes.
 */
export function openRedis(target: RedisTarget, name: string, timeoutMs: number, blocking: boolean): RedisClient {
  return openRedisClient(target, {
    connectionName: name,
    connectTimeoutMs: timeoutMs,
    maxRetriesPerRequest: blocking ? 0 : 1,
    resendAfterReconnect: false,
    offlineQueue: !blocking,
    slotsRefreshIntervalMs: blocking ? 60_000 : 10_000,
  });
}

/** The one error every Redis failure becomes, so the HTTP layer answers 503 and never 500. */
export function streamUnavailable(cause: unknown): AppError {
  return new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable.', { cause, retryAfterSeconds: 1 });
}

/**
 * Races `work` against a deadline. On timeout the connection is dropped and reopened, because a
 * silent socket (a paused Redis) would otherwise keep every later command queued behind it.
 */
export function withDeadlineOrReconnect<T>(redis: RedisClient, work: Promise<T>, ms: number): Promise<T> {
  return withDeadline(work, ms, () => redis.disconnect(true));
}

/** Resolves when the connection is ready; rejects after `ms` or once it has ended for good. */
export function waitReady(redis: RedisClient, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  if (redis.status === 'end') return Promise.reject(new Error('connection closed'));
  return new Promise((resolve, reject) => {
    const done = (err?: Error): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('end', onEnd);
      if (err) reject(err);
      else resolve();
    };
    const onReady = (): void => done();
    const onEnd = (): void => done(new Error('connection closed'));
    const timer = setTimeout(() => done(new Error(`redis not ready within ${ms} ms`)), ms);
    redis.on('ready', onReady);
    redis.on('end', onEnd);
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `['k1', 'v1', 'k2', 'v2']` → record; Redis replies to XINFO and XREAD fields come flat like this. */
export function flatToRecord(flat: unknown): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  if (!Array.isArray(flat)) return record;
  for (let i = 0; i + 1 < flat.length; i += 2) record[String(flat[i])] = flat[i + 1];
  return record;
}

/**
 * The hash tag Redis Cluster places a key by (the part between the first `{` and the next `}` when
 * not empty, else the whole key): keys with the same tag share a slot.
 */
function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/**
 * Runs one command per item, each on the key `keyOf` names: one pipeline on a single node; on a
 * Cluster one pipeline per hash tag, because ioredis refuses a pipeline whose keys live on different
 * nodes (and slots move between nodes). The commands of one tag keep their order; the replies come
 * back in the order of `items`.
 */
export async function execPerSlot<T>(
  redis: RedisClient,
  items: readonly T[],
  keyOf: (item: T) => string,
  queue: (pipeline: ChainableCommander, item: T) => void,
): Promise<Array<[Error | null, unknown]>> {
  const groups = new Map<string, number[]>();
  for (const [index, item] of items.entries()) {
    const tag = redis.isCluster ? hashTagOf(keyOf(item)) : '';
    const indices = groups.get(tag);
    if (indices) indices.push(index);
    else groups.set(tag, [index]);
  }
  const replies: Array<[Error | null, unknown]> = new Array(items.length);
  await Promise.all(
    [...groups.values()].map(async (indices) => {
      const pipeline = redis.pipeline();
      for (const index of indices) queue(pipeline, items[index] as T);
      const results = await pipeline.exec();
      if (!results) throw new Error('pipeline aborted');
      for (const [n, index] of indices.entries()) replies[index] = results[n] ?? [new Error('missing reply'), null];
    }),
  );
  return replies;
}
