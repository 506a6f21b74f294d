/** How a failed delivery is retried. */
export interface RetryPolicy {
  /** Failed attempts at one delivery before it is dead-lettered. */
  maxAttempts: number;
  /** The first retry's step. */
  baseDelayMs: number;
  /** The largest step. */
  maxDelayMs: number;
}

/**
 * The wait after the `failedAttempts`-th failure: the step doubles per failure up to `maxDelayMs`,
 * and the wait is uniform over the upper half of the step ("equal jitter"), so retries of many lanes
 * that failed together (a receiver that was down) spread out, and each wait still grows.
 */
export function retryDelayMs(policy: RetryPolicy, failedAttempts: number, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(step / 2 + random() * (step / 2));
}
