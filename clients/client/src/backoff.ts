import type { BackoffOptions } from './client-options.ts';

/** Resolved backoff bounds. */
export interface BackoffBounds {
  baseDelayMs: number;
  maxDelayMs: number;
  /** The jitter's random source, in [0, 1). */
  random: () => number;
}

/** Fills in the defaults of {@link BackoffOptions}. */
export function backoffBounds(options: BackoffOptions | undefined): BackoffBounds {
  const baseDelayMs = Math.max(1, options?.baseDelayMs ?? 200);
  return { baseDelayMs, maxDelayMs: Math.max(baseDelayMs, options?.maxDelayMs ?? 5_000), random: options?.random ?? Math.random };
}

/** The capped exponential step of retry number `attempt` (0 for the first retry). */
function stepOf(attempt: number, bounds: BackoffBounds): number {
  return Math.min(bounds.maxDelayMs, bounds.baseDelayMs * 2 ** Math.min(attempt, 30));
}

/**
 * Delay before retry number `attempt` (0 for the first retry): "full jitter", uniform over
 * [0, step] with the step exponential and capped. A fleet of clients cut by the same failure (a
 * gateway lost, a deploy) spreads over the whole step instead of coming back together; half-fixed
 * delays would put every client of the first round inside the step's upper half.
 */
export function backoffDelay(attempt: number, bounds: BackoffBounds): number {
  return Math.round(bounds.random() * stepOf(attempt, bounds));
}

/**
 * Delay before retry number `attempt` after an answer that asked for `Retry-After` seconds (429,
 * 503): at least what it asked for (spec 7), plus full jitter over the attempt's step, so clients
 * told the same number of seconds do not return at one instant; at most `maxMs`.
 */
export function retryAfterDelay(retryAfterSeconds: number, attempt: number, bounds: BackoffBounds, maxMs: number): number {
  return Math.min(maxMs, retryAfterSeconds * 1000 + backoffDelay(attempt, bounds));
}

/**
 * Parses `Retry-After` as the spec sends it (integer seconds); an HTTP date is honoured too.
 * Returns seconds, or `undefined` when absent or unreadable.
 */
export function parseRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The reason an aborted signal carries, as an Error the caller can recognise (`name` 'AbortError'). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
