import type { BackoffOptions } from './client-options.ts';

/** Resolved backoff bounds. */
export interface BackoffBounds {
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Fills in the defaults of {@link BackoffOptions}. */
export function backoffBounds(options: BackoffOptions | undefined): BackoffBounds {
  const baseDelayMs = Math.max(1, options?.baseDelayMs ?? 200);
  return { baseDelayMs, maxDelayMs: Math.max(baseDelayMs, options?.maxDelayMs ?? 5_000) };
}

/**
 * Delay before retry number `attempt` (0 for the first retry): exponential, capped, with "equal
 * jitter" (half fixed, half random) so a fleet of clients cut by the same failure spreads out
 * instead of reconnecting in lockstep, while no delay drops below half its step.
 */
export function backoffDelay(attempt: number, bounds: BackoffBounds, random: () => number = Math.random): number {
  const step = Math.min(bounds.maxDelayMs, bounds.baseDelayMs * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + random() * (step / 2));
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
