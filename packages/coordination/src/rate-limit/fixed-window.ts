import { AppError } from '@chat/contracts';
import {
  DEFAULT_APPEND_RATE_LIMIT,
  DEFAULT_APPEND_RATE_WINDOW_SECONDS,
  type AppendRateKey,
  type AppendRateScope,
  type FixedWindowOptions,
} from './append-rate-limiter.ts';

/** {@link FixedWindowOptions} with defaults applied and checked. */
export interface FixedWindowSettings {
  readonly limit: number;
  readonly windowSeconds: number;
  readonly scope: AppendRateScope;
  readonly clock: () => number;
}

export function fixedWindowSettings(options: FixedWindowOptions): FixedWindowSettings {
  const limit = options.limit ?? DEFAULT_APPEND_RATE_LIMIT;
  const windowSeconds = options.windowSeconds ?? DEFAULT_APPEND_RATE_WINDOW_SECONDS;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1) {
    throw new RangeError(`rate window must be a positive whole number of seconds, got ${windowSeconds}`);
  }
  return { limit, windowSeconds, scope: options.scope ?? 'sender-room', clock: options.clock ?? Date.now };
}

/** The window holding `nowMs`: its index since the epoch and the milliseconds until it ends (at least 1). */
export function windowAt(nowMs: number, windowSeconds: number): { index: number; remainingMs: number } {
  const windowMs = windowSeconds * 1000;
  const index = Math.floor(nowMs / windowMs);
  return { index, remainingMs: Math.max(1, (index + 1) * windowMs - nowMs) };
}

/** Who a budget belongs to; a user and a bot with the same ID have separate budgets. */
export function senderPart(key: AppendRateKey): string {
  return `${key.senderKind}:${key.senderId}`;
}

/** The room part of a budget's name: the room for per-room budgets, `*` for one budget across rooms. */
export function roomPart(key: AppendRateKey, scope: AppendRateScope): string {
  return scope === 'sender-room' ? key.roomScopeKey : '*';
}

/** The 429 answer; Retry-After is whole seconds, rounded up so a client that waits is never early. */
export function rateLimited(retryAfterMs: number): AppError {
  return new AppError('RATE_LIMITED', 'Too many messages; retry with the same Idempotency-Key after Retry-After seconds.', {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  });
}
