export {
  DEFAULT_APPEND_RATE_LIMIT,
  DEFAULT_APPEND_RATE_WINDOW_SECONDS,
  type AppendRateKey,
  type AppendRateLimiter,
  type AppendRateScope,
  type FixedWindowOptions,
  type RateUnit,
  UNCOUNTED_UNIT,
} from './rate-limit/append-rate-limiter.ts';
export { InProcessFixedWindowRateLimiter } from './rate-limit/in-process-fixed-window-rate-limiter.ts';
export {
  RedisFixedWindowRateLimiter,
  type RateLimitFailureMode,
  type RedisFixedWindowRateLimiterOptions,
} from './rate-limit/redis-fixed-window-rate-limiter.ts';
export type { StreamCapOptions, StreamLease, StreamLeaseRegistry } from './leases/stream-lease-registry.ts';
export { StreamLeaseLostError } from './leases/stream-lease-lost-error.ts';
export { InProcessStreamLeaseRegistry } from './leases/in-process-stream-lease-registry.ts';
export { RedisStreamLeaseRegistry, type RedisStreamLeaseRegistryOptions } from './leases/redis-stream-lease-registry.ts';
export type { RedisTargetOrClient } from './redis/redis-connection.ts';
export { createStreamLeaseRegistry } from './leases/create-stream-lease-registry.ts';
