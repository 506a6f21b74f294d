import { AppError } from '@chat/contracts';

/**
 * Bounds how many authorizations one principal has waiting for core or in a call at once, so one
 * token flooding requests cannot fill the queue every principal shares (AuthorizeCoalescer's
 * `maxQueued`) and turn everyone else's requests into 503s: past its share, that principal's next
 * authorization is refused at once, and the others' keep their place. A principal is counted by
 * kind and ID, whatever token or credential it uses.
 */
export class PrincipalShares {
  readonly #pending = new Map<string, number>();

  /** @param maxPerPrincipal authorizations one principal may have pending at once */
  constructor(readonly maxPerPrincipal: number) {
    if (!(maxPerPrincipal >= 1)) throw new RangeError(`maxPerPrincipal must be at least 1, got ${maxPerPrincipal}`);
  }

  /** Authorizations `key` has pending now. */
  pending(key: string): number {
    return this.#pending.get(key) ?? 0;
  }

  /** Principals with anything pending (for tests: the map forgets a principal once it has none). */
  get principals(): number {
    return this.#pending.size;
  }

  /**
   * Runs `authorize` as one of `key`'s pending authorizations, or refuses it with 503
   * AUTHORIZATION_UNAVAILABLE and Retry-After when `key` already has its share pending. The contract
   * gives reads no 429, and what the caller waits for is core, so the refusal is core's code.
   */
  async run<T>(key: string, authorize: () => Promise<T>): Promise<T> {
    const held = this.pending(key);
    if (held >= this.maxPerPrincipal) {
      throw new AppError(
        'AUTHORIZATION_UNAVAILABLE',
        `Authorization is unavailable: ${this.maxPerPrincipal} authorizations of this principal already wait for the core service.`,
        { retryAfterSeconds: 1 },
      );
    }
    this.#pending.set(key, held + 1);
    try {
      return await authorize();
    } finally {
      const left = this.pending(key) - 1;
      if (left === 0) this.#pending.delete(key);
      else this.#pending.set(key, left);
    }
  }
}
