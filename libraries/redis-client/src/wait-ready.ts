import type { RedisClient } from './redis-target.ts';

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
