import type { AuthorizationDecision, AuthorizationRequest } from './core-contract.schema.ts';

/** One chat request's authorization: what core decides on, and the request ID for its logs. */
export interface AuthorizeCall {
  input: AuthorizationRequest;
  requestId?: string;
}

/**
 * Sends calls to core: one answer per call, in order; an Error in place of an answer fails only
 * that call, a throw fails them all.
 */
export type AuthorizeSender = (calls: AuthorizeCall[]) => Promise<Array<AuthorizationDecision | Error>>;

export interface AuthorizeCoalescerOptions {
  /** Core calls in flight at once, not counting stalled ones; beyond that authorizations queue. @defaultValue 1 */
  maxConcurrent?: number;
  /**
   * A call still unanswered after this long is stalled: it stops holding its lane, so one slow
   * answer from core does not hold up every authorization queued behind it. @defaultValue 25
   */
  stalledAfterMs?: number;
  /** Core calls in flight at once, stalled ones included. @defaultValue 4 */
  maxInFlight?: number;
  /** Most authorizations one call carries (core takes up to 100). @defaultValue 64 */
  maxBatch?: number;
}

/**
 * Shares core calls between concurrent authorizations. While fewer than `maxConcurrent` calls are in
 * flight, an authorization goes out at once and alone, so an idle service keeps its latency and its
 * one call per request; beyond that authorizations queue, and when a call returns the next one
 * carries the whole queue. Every authorization still gets its own live decision from core: only the
 * HTTP call is shared, which on a busy API was a fifth of its CPU. One lane by default: with two,
 * a call carried ~3 authorizations instead of ~4, and the API and core spent more CPU per append
 * (measured with `pnpm bench --only append`); the stall rule keeps one lane from being a single point of delay.
 */
export class AuthorizeCoalescer {
  private queue: Array<{ call: AuthorizeCall; resolve(decision: AuthorizationDecision): void; reject(err: unknown): void }> = [];
  /** Calls holding a lane (in flight and not stalled). */
  private active = 0;
  private inFlight = 0;
  private readonly maxConcurrent: number;
  private readonly stalledAfterMs: number;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;

  constructor(
    private readonly send: AuthorizeSender,
    options: AuthorizeCoalescerOptions = {},
  ) {
    this.maxConcurrent = options.maxConcurrent ?? 1;
    this.stalledAfterMs = options.stalledAfterMs ?? 25;
    this.maxInFlight = Math.max(this.maxConcurrent, options.maxInFlight ?? 4);
    this.maxBatch = options.maxBatch ?? 64;
  }

  submit(call: AuthorizeCall): Promise<AuthorizationDecision> {
    return new Promise<AuthorizationDecision>((resolve, reject) => {
      this.queue.push({ call, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.maxConcurrent && this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      void this.run(batch);
    }
  }

  private async run(batch: AuthorizeCoalescer['queue']): Promise<void> {
    this.active += 1;
    this.inFlight += 1;
    let stalled = false;
    const stallTimer = setTimeout(() => {
      stalled = true;
      this.active -= 1;
      this.pump();
    }, this.stalledAfterMs);
    try {
      const answers = await this.send(batch.map((entry) => entry.call));
      batch.forEach((entry, i) => {
        const answer = answers[i];
        if (answer === undefined) entry.reject(new Error('core left an authorization unanswered'));
        else if (answer instanceof Error) entry.reject(answer);
        else entry.resolve(answer);
      });
    } catch (err) {
      for (const entry of batch) entry.reject(err);
    } finally {
      clearTimeout(stallTimer);
      if (!stalled) this.active -= 1;
      this.inFlight -= 1;
      this.pump();
    }
  }
}
