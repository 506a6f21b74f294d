import { AppError } from '@chat/contracts';

export interface OpenRateSettings {
  /** Stream opens this process admits per second, on average. */
  opensPerSecond: number;
  /** Opens it admits at once after a quiet spell (the bucket's size). */
  burst: number;
}

/** The longest `Retry-After` a refused open is told, however large the crowd behind it. */
const MAX_RETRY_AFTER_SECONDS = 30;

/**
 * The process's stream-open rate: a token bucket refilled at `opensPerSecond` up to `burst`, taken
 * from before anything else an open costs (the token check, core's authorization, the stream-cap
 * leases, the replay), so a refusal is cheap. A refused open gets 503 `STREAM_UNAVAILABLE` with a
 * `Retry-After` drawn at random from 1 to the seconds the crowd refused over the last second needs at
 * this rate: a thousand clients refused together come back spread over the time the bucket can
 * admit them, not at one instant.
 */
export class OpenRate {
  private tokens: number;
  private refilledAt: number;
  /** Refusals in the current one-second window and in the one before it. */
  private windowStart: number;
  private refusedNow = 0;
  private refusedBefore = 0;

  constructor(
    private readonly settings: OpenRateSettings,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {
    this.tokens = settings.burst;
    this.refilledAt = now();
    this.windowStart = this.refilledAt;
  }

  /** Takes one open's token; @throws AppError STREAM_UNAVAILABLE with a jittered Retry-After when none is left. */
  admit(): void {
    const now = this.now();
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return;
    }
    this.countRefusal(now);
    throw new AppError('STREAM_UNAVAILABLE', 'This gateway is opening streams as fast as it may; retry after Retry-After seconds.', {
      retryAfterSeconds: this.retryAfterSeconds(),
    });
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.refilledAt);
    this.refilledAt = now;
    this.tokens = Math.min(this.settings.burst, this.tokens + (elapsed * this.settings.opensPerSecond) / 1000);
  }

  private countRefusal(now: number): void {
    const windows = Math.floor((now - this.windowStart) / 1000);
    if (windows >= 1) {
      this.refusedBefore = windows === 1 ? this.refusedNow : 0;
      this.refusedNow = 0;
      this.windowStart += windows * 1000;
    }
    this.refusedNow += 1;
  }

  /** Uniform over 1..spread, where spread is the seconds the recently refused crowd needs at this rate. */
  private retryAfterSeconds(): number {
    const crowd = Math.max(this.refusedNow, this.refusedBefore);
    const spread = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(2, Math.ceil(crowd / this.settings.opensPerSecond)));
    return 1 + Math.min(spread - 1, Math.floor(this.random() * spread));
  }
}
