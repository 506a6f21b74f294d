/**
 * The append rate limit (spec section 8): a fixed window shared by every API instance. The API
 * codes against this interface; the Redis and in-process limiters implement it.
 */
export interface AppendRateKey {
  senderKind: 'user' | 'bot';
  senderId: string;
  roomScopeKey: string;
}

export interface AppendRateLimiter {
  /**
   * Takes one unit of the sender's budget in the current window, or throws
   * `AppError('RATE_LIMITED', …, { retryAfterSeconds })` with the whole seconds (at least 1) until
   * the window resets. The unit can be given back (see {@link RateUnit}).
   */
  consume(key: AppendRateKey): Promise<RateUnit>;
}

/**
 * A unit `consume` took. The API takes the unit before it knows whether an append is an exact retry
 * (the store tells it, in the append itself) and gives it back when it was, or when nothing was
 * appended, so that those consume no capacity in the end.
 */
export interface RateUnit {
  /**
   * Returns the unit to the window it came from; a no-op once that window has ended, and after the
   * first call. Never throws: a refund that cannot reach the shared counter leaves the unit spent.
   */
  refund(): Promise<void>;
}

/** The unit of a limiter that let an append through without counting it (Redis down, failing open). */
export const UNCOUNTED_UNIT: RateUnit = { refund: async () => undefined };

/**
 * What one budget covers: `sender-room` gives each sender a budget per room, `sender` one budget
 * across all rooms.
 */
export type AppendRateScope = 'sender-room' | 'sender';

/** Settings both limiters share. */
export interface FixedWindowOptions {
  /**
   * Appends allowed per budget per window.
   * @defaultValue 60
   */
  limit?: number;
  /**
   * Window length in whole seconds; windows start at multiples of it since the Unix epoch, so
   * every instance agrees on where a window begins without talking to the others.
   * @defaultValue 60
   */
  windowSeconds?: number;
  /**
   * What one budget covers.
   * @defaultValue 'sender-room'
   */
  scope?: AppendRateScope;
  /**
   * Milliseconds since the epoch; tests move it to place a request at an exact point of a window.
   * @defaultValue Date.now
   */
  clock?: () => number;
}

export const DEFAULT_APPEND_RATE_LIMIT = 60;
export const DEFAULT_APPEND_RATE_WINDOW_SECONDS = 60;
