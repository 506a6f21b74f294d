import { Redis, type RedisOptions } from 'ioredis';
import { AppError } from '@chat/contracts';

/** Where to find Redis: a `redis://` URL or ioredis options (their `keyPrefix` is ignored). */
export type RedisTarget = string | RedisOptions;

/**
 * Opens a connection tuned to fail fast: a command waits at most `timeoutMs` (or, for blocking
 * reads, is guarded by the caller), and nothing is silently re-sent after a reconnect, because a
 * late duplicate write is worse here than a clear error the caller can retry.
 */
export function openRedis(target: RedisTarget, name: string, timeoutMs: number, blocking: boolean): Redis {
  const forced: RedisOptions = {
    connectionName: name,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: blocking ? 0 : 1,
    enableOfflineQueue: !blocking,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times: number) => Math.min(times * 100, 2000),
    ...(blocking ? {} : { commandTimeout: timeoutMs }),
  };
  const redis =
    typeof target === 'string' ? new Redis(target, forced) : new Redis({ ...target, keyPrefix: undefined, ...forced });
  // Failures reach callers through their commands; without a listener ioredis prints every retry.
  redis.on('error', () => undefined);
  return redis;
}

/** The one error every Redis failure becomes, so the HTTP layer answers 503 and never 500. */
export function streamUnavailable(cause: unknown): AppError {
  return new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable.', { cause, retryAfterSeconds: 1 });
}

/**
 * Races `work` against a deadline. On timeout the connection is dropped and reopened, because a
 * silent socket (a paused Redis) would otherwise keep every later command queued behind it.
 */
export async function withDeadline<T>(redis: Redis, work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      redis.disconnect(true);
      reject(new Error(`redis did not answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined);
  }
}

/** Resolves when the connection is ready; rejects after `ms` or once it has ended for good. */
export function waitReady(redis: Redis, ms: number): Promise<void> {
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
