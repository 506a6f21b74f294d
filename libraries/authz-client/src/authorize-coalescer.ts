import { Batcher } from '@chat/batching';
import { AppError } from '@chat/contracts';
import type { CoreCallSpan } from '@chat/tracing';
import type { AuthorizationDecision, AuthorizationRequest } from './core-contract.schema.ts';

/** One chat request's authorization: what core decides on, the request ID for its logs, and its span (tracing on). */
export interface AuthorizeCall {
  input: AuthorizationRequest;
  requestId?: string;
  span?: CoreCallSpan | undefined;
}

/**
 * Sends calls to core: one answer per call, in order; an Error in place of an answer fails only
 * that call, a throw fails them all.
 */
type AuthorizeSender = (calls: AuthorizeCall[]) => Promise<Array<AuthorizationDecision | Error>>;

interface AuthorizeCoalescerOptions {
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
  /**
   * Most authorizations waiting for a call; beyond it an authorization fails at once with 503
   * AUTHORIZATION_UNAVAILABLE, so a flood while core is slow costs the service neither memory nor
   * everybody's latency. A healthy core empties the queue every few milliseconds, with a few dozen
   * in it at the API's measured peak. @defaultValue 1024
   */
  maxQueued?: number;
  /**
   * Longest time an authorization takes, its wait for a call and the call together; past it the
   * caller gets 503 AUTHORIZATION_UNAVAILABLE whatever core answers later. Set to the core client's
   * timeout, so a request never waits for core longer than that however it queued.
   * @defaultValue Infinity
   */
  deadlineMs?: number;
}

/**
 * Shares core calls between concurrent authorizations. While fewer than `maxConcurrent` calls are in
 * flight, an authorization goes out at once and alone, so an idle service keeps its latency and its
 * one call per request; beyond that authorizations queue, and when a call returns the next one
 * carries the whole queue. Every authorization still gets its own live decision from core: only the
 * HTTP call is shared, which on a busy API was a fifth of its CPU. One lane by default: with two,
 * a call carried ~3 authorizations instead of ~4, and the API and core spent more CPU per append
 * (measured with `pnpm bench --only append`); the stall rule keeps one lane from being a single point of delay, and the
 * queue cap and deadline keep a slow core from piling up requests.
 */
export class AuthorizeCoalescer extends Batcher<AuthorizeCall, AuthorizationDecision> {
  constructor(send: AuthorizeSender, options: AuthorizeCoalescerOptions = {}) {
    super(send, {
      maxConcurrent: options.maxConcurrent ?? 1,
      stalledAfterMs: options.stalledAfterMs ?? 25,
      maxInFlight: options.maxInFlight ?? 4,
      maxBatch: options.maxBatch ?? 64,
      maxQueued: options.maxQueued ?? 1024,
      deadlineMs: options.deadlineMs ?? Infinity,
      queueFullError: (max) =>
        new AppError('AUTHORIZATION_UNAVAILABLE', `Authorization is unavailable: ${max} authorizations already wait for the core service.`, { retryAfterSeconds: 1 }),
      deadlineError: (ms) =>
        new AppError('AUTHORIZATION_UNAVAILABLE', `Authorization is unavailable: the core service did not decide within ${ms} ms.`, { retryAfterSeconds: 1 }),
    });
  }
}
