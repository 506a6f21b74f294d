/**
 * The append rate limit (spec section 8): a fixed window shared by every API instance. `consume`
 * takes one unit or throws AppError RATE_LIMITED with the whole seconds until the window resets.
 */
export interface AppendRateLimiter {
  consume(key: AppendRateKey): Promise<void>;
}

export interface AppendRateKey {
  senderKind: 'user' | 'bot';
  senderId: string;
  roomScopeKey: string;
}
