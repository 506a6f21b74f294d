import { AppError } from '@chat/contracts';
import type { AppendRateKey, AppendRateLimiter } from './append-rate-limiter.ts';

export interface FixedWindowSettings {
  /** Appends allowed per key per window. */
  limit: number;
  windowSeconds: number;
}

export function rateKeyOf(key: AppendRateKey): string {
  return `${key.senderKind}:${key.senderId}:${key.roomScopeKey}`;
}

export function rateLimited(retryAfterSeconds: number): AppError {
  return new AppError('RATE_LIMITED', 'Too many messages; retry with the same Idempotency-Key after Retry-After seconds.', {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
  });
}

/**
 * The fixed window for a single process (the all-in-one mode). Windows are aligned to multiples of
 * the window length, as in the Redis version, and expired counters are dropped as time passes.
 */
export class InProcessRateLimiter implements AppendRateLimiter {
  private readonly counters = new Map<string, number>();
  private windowIndex = -1;

  constructor(
    private readonly settings: FixedWindowSettings,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async consume(key: AppendRateKey): Promise<void> {
    const nowMs = this.clock().getTime();
    const windowMs = this.settings.windowSeconds * 1000;
    const index = Math.floor(nowMs / windowMs);
    if (index !== this.windowIndex) {
      this.counters.clear();
      this.windowIndex = index;
    }
    const name = rateKeyOf(key);
    const used = this.counters.get(name) ?? 0;
    if (used >= this.settings.limit) throw rateLimited(((index + 1) * windowMs - nowMs) / 1000);
    this.counters.set(name, used + 1);
  }
}
