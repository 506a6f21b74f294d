import type { RedisClient } from './redis-target.ts';

/**
 * Races `work` against a deadline of `ms`: rejects when it passes, after calling `onTimeout` (the
 * place to drop a connection whose silent socket would keep later commands queued behind it).
 * `work` settling after the deadline is ignored, a late rejection included.
 *
 * One promise and one timer per call, without `Promise.race` or an async frame: it guards every
 * backbone command, and this form costs about half as much CPU.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, onTimeout?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(`redis did not answer within ${ms} ms`));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * Races `work` on `redis` against a deadline. On timeout the connection is dropped and reopened,
 * because a silent socket (a paused Redis) would otherwise keep every later command queued behind it.
 */
export function withDeadlineOrReconnect<T>(redis: RedisClient, work: Promise<T>, ms: number): Promise<T> {
  return withDeadline(work, ms, () => redis.disconnect(true));
}

/**
 * Settles commands sent side by side (on a Cluster, each to the node of its key; with auto-
 * pipelining they leave in one write per node) within `ms`; returns the failures.
 */
export async function settleWithin(work: Array<Promise<unknown>>, ms: number): Promise<unknown[]> {
  const results = await withDeadline(Promise.allSettled(work), ms);
  return results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
}
