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
  /** Core calls in flight at once; beyond that authorizations queue. @defaultValue 2 */
  maxConcurrent?: number;
  /** Most authorizations one call carries (core takes up to 100). @defaultValue 64 */
  maxBatch?: number;
}

/**
 * Shares core calls between concurrent authorizations. While fewer than `maxConcurrent` calls are in
 * flight, an authorization goes out at once and alone, so an idle service keeps its latency and its
 * one call per request; beyond that authorizations queue, and when a call returns the next one
 * carries the whole queue. Every authorization still gets its own live decision from core: only the
 * HTTP call is shared, which on a busy API was a fifth of its CPU.
 */
export class AuthorizeCoalescer {
  private queue: Array<{ call: AuthorizeCall; resolve(decision: AuthorizationDecision): void; reject(err: unknown): void }> = [];
  private running = 0;
  private readonly maxConcurrent: number;
  private readonly maxBatch: number;

  constructor(
    private readonly send: AuthorizeSender,
    options: AuthorizeCoalescerOptions = {},
  ) {
    this.maxConcurrent = options.maxConcurrent ?? 2;
    this.maxBatch = options.maxBatch ?? 64;
  }

  submit(call: AuthorizeCall): Promise<AuthorizationDecision> {
    return new Promise<AuthorizationDecision>((resolve, reject) => {
      this.queue.push({ call, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.running += 1;
      void this.run(batch);
    }
  }

  private async run(batch: AuthorizeCoalescer['queue']): Promise<void> {
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
      this.running -= 1;
      this.pump();
    }
  }
}
