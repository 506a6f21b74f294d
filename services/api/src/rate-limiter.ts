import { InProcessFixedWindowRateLimiter, RedisFixedWindowRateLimiter } from '@chat/coordination';
import type { Logger } from '@chat/observability';
import type { ApiEnv } from './config.ts';
import type { AppendRateLimiter } from './domain/append-rate-limiter.ts';

/**
 * The append rate limiter for this deployment: one window shared through Redis when Redis is
 * configured (every API instance counts in it), else the same rules in this process.
 */
export function createRateLimiter(env: ApiEnv, logger: Logger): AppendRateLimiter & { close?(): Promise<void> } {
  const settings = { limit: env.APPEND_RATE_LIMIT, windowSeconds: env.APPEND_RATE_WINDOW_SECONDS, scope: env.APPEND_RATE_SCOPE };
  if (!env.REDIS_URL) return new InProcessFixedWindowRateLimiter(settings);
  return new RedisFixedWindowRateLimiter({
    ...settings,
    redis: env.REDIS_URL,
    keyPrefix: env.REDIS_KEY_PREFIX,
    failureMode: env.APPEND_RATE_FAILURE_MODE,
    timeoutMs: env.APPEND_RATE_TIMEOUT_MS,
    onFailure: (err: unknown) => logger.warn({ err }, 'append rate limiter unavailable'),
  });
}
