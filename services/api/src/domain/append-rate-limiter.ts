/**
 * The append rate limit (spec section 8) as the domain sees it: `consume` takes one unit of the
 * sender's fixed window (a unit the API gives back when the append turns out to be an exact retry)
 * or throws RATE_LIMITED with whole seconds until the window resets. The implementations
 * (Redis-shared and in-process) live in `@chat/coordination`.
 */
export type { AppendRateKey, AppendRateLimiter, RateUnit } from '@chat/coordination';
