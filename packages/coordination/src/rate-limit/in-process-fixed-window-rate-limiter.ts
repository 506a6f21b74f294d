import type { AppendRateKey, AppendRateLimiter, FixedWindowOptions, RateUnit } from './append-rate-limiter.ts';
import { fixedWindowSettings, rateLimited, roomPart, senderPart, windowAt, type FixedWindowSettings } from './fixed-window.ts';

/**
 * The fixed window for a single process (the all-in-one mode), with the Redis limiter's semantics:
 * epoch-aligned windows, `limit` units per budget per window, Retry-After until the window ends.
 * Only the current window's counters are kept, so memory is bounded by one window's senders.
 */
export class InProcessFixedWindowRateLimiter implements AppendRateLimiter {
  private readonly settings: FixedWindowSettings;
  private windowIndex = Number.NEGATIVE_INFINITY;
  private counters = new Map<string, number>();

  constructor(options: FixedWindowOptions = {}) {
    this.settings = fixedWindowSettings(options);
  }

  async consume(key: AppendRateKey): Promise<RateUnit> {
    const { limit, windowSeconds, scope, clock } = this.settings;
    const nowMs = clock();
    const window = windowAt(nowMs, windowSeconds);
    if (window.index > this.windowIndex) {
      this.windowIndex = window.index;
      this.counters = new Map();
    }
    // A clock that stepped back stays in the newest window seen: counting there never lets more through.
    const remainingMs = Math.max(1, (this.windowIndex + 1) * windowSeconds * 1000 - nowMs);
    const budget = `${senderPart(key)}\u0000${roomPart(key, scope)}`;
    const used = this.counters.get(budget) ?? 0;
    if (used >= limit) throw rateLimited(remainingMs);
    this.counters.set(budget, used + 1);
    const windowIndex = this.windowIndex;
    let refunded = false;
    return {
      refund: async () => {
        if (refunded || windowIndex !== this.windowIndex) return;
        refunded = true;
        const now = this.counters.get(budget) ?? 0;
        if (now > 0) this.counters.set(budget, now - 1);
      },
    };
  }
}
