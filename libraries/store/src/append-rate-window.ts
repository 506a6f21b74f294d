/**
 * The append rate limit (spec section 8): a fixed window shared by every API instance, counted in
 * PostgreSQL beside the messages. This module places an append in its budget and window; the
 * append statement (`sql/functions/chat_append_messages_v4.sql`, through
 * `chat_take_append_rate_unit.sql`) takes the unit in the append's own transaction, and
 * `rate-window.repository.ts` gives units back and sweeps ended windows.
 */

/** The append rate limit's settings, as the API's configuration checked them (positive whole numbers). */
export interface AppendRateLimit {
  /** Appends allowed per budget per window. */
  limit: number;
  /**
   * Window length in whole seconds; windows start at multiples of it since the Unix epoch, so every
   * instance agrees on where a window begins without talking to the others.
   */
  windowSeconds: number;
  /** What one budget covers: each sender per room (`sender-room`), or each sender across rooms (`sender`). */
  per: 'sender-room' | 'sender';
}

/** One budget in one fixed window: a sender in a room, or a sender across rooms (`roomKey` '*'). */
export interface AppendRateBudget {
  senderKind: 'user' | 'bot';
  senderId: string;
  /** The room's scope key, or '*' for a budget across rooms. */
  roomKey: string;
  /** Start of the window, in milliseconds since the epoch. */
  windowStartMs: number;
  /** Units the budget holds per window. */
  limit: number;
}

/** A budget in the window that holds a moment, and the milliseconds left of that window (at least 1). */
export interface PlacedBudget {
  budget: AppendRateBudget;
  retryAfterMs: number;
}

/** The budget a sender's append into the room `roomScopeKey` counts against at `nowMs`. */
export function placeBudget(
  rate: AppendRateLimit,
  sender: { senderKind: 'user' | 'bot'; senderId: string },
  roomScopeKey: string,
  nowMs: number,
): PlacedBudget {
  const windowMs = rate.windowSeconds * 1000;
  const windowStartMs = windowStartAt(rate, nowMs);
  return {
    budget: {
      senderKind: sender.senderKind,
      senderId: sender.senderId,
      roomKey: rate.per === 'sender-room' ? roomScopeKey : '*',
      windowStartMs,
      limit: rate.limit,
    },
    retryAfterMs: Math.max(1, windowStartMs + windowMs - nowMs),
  };
}

/** Start of the window that holds `nowMs`. */
export function windowStartAt(rate: Pick<AppendRateLimit, 'windowSeconds'>, nowMs: number): number {
  const windowMs = rate.windowSeconds * 1000;
  return Math.floor(nowMs / windowMs) * windowMs;
}
