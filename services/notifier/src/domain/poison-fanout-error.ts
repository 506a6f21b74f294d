/**
 * A fanout that can never succeed however often it is retried (its message is missing or malformed).
 * Any error other than a dependency outage counts as such an attempt; this one names the common case.
 */
export class PoisonFanoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonFanoutError';
  }
}
