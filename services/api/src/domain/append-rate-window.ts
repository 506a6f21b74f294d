import { AppError } from '@chat/contracts';
import type { AppendRateBudget, RateWindowRepository } from '@chat/store';

/**
 * What one budget covers: `sender-room` gives each sender a budget per room, `sender` one budget
 * across all rooms.
 */
export type AppendRateScope = 'sender-room' | 'sender';

/** The append rate limit's settings (spec section 8: a shared fixed window). */
export interface AppendRateSettings {
  /** Appends allowed per budget per window. */
  limit: number;
  /**
   * Window length in whole seconds; windows start at multiples of it since the Unix epoch, so every
   * instance agrees on where a window begins without talking to the others.
   */
  windowSeconds: number;
  scope: AppendRateScope;
}

/** Who appends where. */
export interface AppendRateKey {
  senderKind: 'user' | 'bot';
  senderId: string;
  roomScopeKey: string;
}

/** A budget in the window that holds a moment, and the milliseconds left of that window (at least 1). */
export interface PlacedBudget {
  budget: AppendRateBudget;
  remainingMs: number;
}

/**
 * A unit taken ahead of the append (appends with mentions, see append-message.ts). `giveBack`
 * returns it to the window it came from, at most once, and never throws: a return that cannot reach
 * the store leaves the unit spent.
 */
export interface RateUnit {
  giveBack(): Promise<void>;
}

/**
 * The append rate window, kept in PostgreSQL beside the messages and so shared by every API
 * instance: a plain append takes its unit inside its own append statement (`budgetAt` places the
 * budget, the store counts it), an append with mentions takes it ahead with `take`.
 */
export class AppendRateWindow {
  private readonly windowMs: number;

  /** `settings` as the API's configuration checked them (positive whole numbers). */
  constructor(
    private readonly windows: RateWindowRepository,
    private readonly settings: AppendRateSettings,
    private readonly onGiveBackFailure: (err: unknown) => void = () => undefined,
  ) {
    this.windowMs = settings.windowSeconds * 1000;
  }

  /** The budget `key` counts against in the window holding `nowMs`. */
  budgetAt(key: AppendRateKey, nowMs: number): PlacedBudget {
    const windowStartMs = this.windowStartAt(nowMs);
    return {
      budget: {
        senderKind: key.senderKind,
        senderId: key.senderId,
        roomKey: this.settings.scope === 'sender-room' ? key.roomScopeKey : '*',
        windowStartMs,
        limit: this.settings.limit,
      },
      remainingMs: Math.max(1, windowStartMs + this.windowMs - nowMs),
    };
  }

  /** Takes a unit of `key`'s budget now, or throws RATE_LIMITED. */
  async take(key: AppendRateKey, nowMs: number): Promise<RateUnit> {
    const { budget, remainingMs } = this.budgetAt(key, nowMs);
    if (!(await this.windows.take(budget))) throw rateLimited(remainingMs);
    let given = false;
    return {
      giveBack: async () => {
        if (given) return;
        given = true;
        try {
          await this.windows.giveBack(budget);
        } catch (err) {
          this.onGiveBackFailure(err);
        }
      },
    };
  }

  /** Deletes the rows of windows that ended before `nowMs`, a batch at a time; returns how many went. */
  async sweep(nowMs: number, batch = 10_000): Promise<number> {
    const before = this.windowStartAt(nowMs);
    let total = 0;
    for (;;) {
      const swept = await this.windows.sweep(before, batch);
      total += swept;
      if (swept < batch) return total;
    }
  }

  private windowStartAt(nowMs: number): number {
    return Math.floor(nowMs / this.windowMs) * this.windowMs;
  }
}

/** The 429 answer; Retry-After is whole seconds, rounded up so a client that waits is never early. */
export function rateLimited(retryAfterMs: number): AppError {
  return new AppError('RATE_LIMITED', 'Too many messages; retry with the same Idempotency-Key after Retry-After seconds.', {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  });
}
