import type { VerifiedPrincipal } from './verified-principal.ts';

/**
 * Remembers tokens that passed signature and claim checks, so a client sending the same bearer token
 * on every request is not re-verified (ES256 verification was ~10 % of an API process's CPU). An entry
 * lives until the token's `exp` or `ttlMs` after verification, whichever is first, and the oldest
 * entries go first when `maxEntries` is reached. Only successes are kept: a refused token is checked
 * again every time. Access itself is never cached: core still authorizes every request live.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, { principal: VerifiedPrincipal; validUntilMs: number }>();

  constructor(
    private readonly options: { ttlMs: number; maxEntries: number; now?: () => number },
  ) {}

  get(token: string): VerifiedPrincipal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (this.now() >= entry.validUntilMs) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.principal;
  }

  set(token: string, principal: VerifiedPrincipal): void {
    if (this.options.maxEntries <= 0 || this.options.ttlMs <= 0) return;
    const validUntilMs = Math.min(principal.expiresAt.getTime(), this.now() + this.options.ttlMs);
    this.entries.delete(token);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(token, { principal: Object.freeze(principal), validUntilMs });
  }

  get size(): number {
    return this.entries.size;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
