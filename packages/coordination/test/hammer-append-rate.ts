/**
 * One simulated API process for the cross-process rate-limit test: its own Redis connection,
 * `attempts` appends by one sender into one room, all at a shared start time, then one JSON line
 * with what it was allowed. Usage: hammer-append-rate.ts <redisUrl> <prefix> <limit> <windowSeconds>
 * <nowMs> <senderId> <roomScopeKey> <attempts> <startAtMs>
 */
import { AppError } from '@chat/contracts';
import { RedisFixedWindowRateLimiter } from '../src/index.ts';

const [redisUrl, keyPrefix, limit, windowSeconds, nowMs, senderId, roomScopeKey, attempts, startAtMs] = process.argv.slice(2);
if (startAtMs === undefined) throw new Error('usage: hammer-append-rate.ts <redisUrl> <prefix> <limit> <windowSeconds> <nowMs> <senderId> <room> <attempts> <startAtMs>');

const limiter = new RedisFixedWindowRateLimiter({
  redis: redisUrl as string,
  keyPrefix,
  limit: Number(limit),
  windowSeconds: Number(windowSeconds),
  // Every process is pinned to the same instant, so they all hit one window wherever the wall clock is.
  clock: () => Number(nowMs),
  failureMode: 'closed',
  timeoutMs: 5_000,
});

await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAtMs) - Date.now())));
const counts = { allowed: 0, limited: 0, failed: 0 };
await Promise.all(
  Array.from({ length: Number(attempts) }, async () => {
    try {
      await limiter.consume({ senderKind: 'bot', senderId: senderId as string, roomScopeKey: roomScopeKey as string });
      counts.allowed += 1;
    } catch (err) {
      if (err instanceof AppError && err.code === 'RATE_LIMITED') counts.limited += 1;
      else counts.failed += 1;
    }
  }),
);
await limiter.close();
process.stdout.write(`${JSON.stringify(counts)}\n`);
