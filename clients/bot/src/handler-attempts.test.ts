import { expect } from 'chai';
import { ChatApiError, ChatNetworkError, ChatTokenRejectedError } from '@chat/client';
import { isServiceUnavailable, runHandlerAttempts, type HandlerAttemptEvents } from './handler-attempts.ts';

const BASE_URL = 'http://127.0.0.1:8080';
const unreachable = () => new ChatNetworkError(BASE_URL, 'no answer to POST /v1/repositories/x/room/messages after 5 attempts', { cause: new Error('fetch failed') });
const apiError = (status: number, code: string) => new ChatApiError({ code, status, requestId: undefined, message: code });

/** The events a run reported, in order. */
function recorder(): { events: HandlerAttemptEvents; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    events: {
      retrying: (_error, attempt) => seen.push(`retrying ${attempt}`),
      waitingForService: () => seen.push('waiting for the service'),
      givingUp: () => seen.push('giving up'),
    },
  };
}

/** A handler that throws the given errors on its first runs, then succeeds; counts its runs. */
function failingFirst(errors: unknown[]): { run: () => Promise<void>; runs: () => number } {
  let runs = 0;
  return {
    runs: () => runs,
    run: async () => {
      const error = errors[runs];
      runs += 1;
      if (error !== undefined) throw error;
    },
  };
}

describe('runHandlerAttempts', () => {
  const policy = { max: 3, delayMs: 1 };

  it('a service that does not answer, or answers it is unavailable, uses no attempt: the handler runs until it succeeds', async () => {
    const errors = [unreachable(), unreachable(), apiError(503, 'STORE_UNAVAILABLE'), unreachable(), apiError(502, 'UNEXPECTED_RESPONSE'), apiError(429, 'RATE_LIMITED'), unreachable()];
    const handler = failingFirst(errors);
    const { events, seen } = recorder();
    expect(await runHandlerAttempts(handler.run, policy, new AbortController().signal, events)).to.equal(true);
    expect(handler.runs()).to.equal(errors.length + 1);
    // Told once per outage, not once per run.
    expect(seen).to.deep.equal(['waiting for the service']);
  });

  it("the handler's own failures are run again up to the maximum, then the notification is passed over", async () => {
    const handler = failingFirst([new Error('bug'), new Error('bug'), new Error('bug'), new Error('never reached')]);
    const { events, seen } = recorder();
    expect(await runHandlerAttempts(handler.run, policy, new AbortController().signal, events)).to.equal(true);
    expect(handler.runs()).to.equal(3);
    expect(seen).to.deep.equal(['retrying 1', 'retrying 2', 'giving up']);
  });

  it('an outage between two failures of the handler counts neither way', async () => {
    const handler = failingFirst([new Error('bug'), unreachable(), unreachable(), new Error('bug'), apiError(504, 'UNEXPECTED_RESPONSE'), new Error('bug')]);
    const { events, seen } = recorder();
    expect(await runHandlerAttempts(handler.run, policy, new AbortController().signal, events)).to.equal(true);
    expect(handler.runs()).to.equal(6);
    expect(seen).to.deep.equal(['retrying 1', 'waiting for the service', 'retrying 2', 'waiting for the service', 'giving up']);
  });

  it('a refused token is thrown at once, and a 4xx is the handler failing', async () => {
    const refused = new ChatTokenRejectedError(apiError(401, 'TOKEN_REJECTED'), BASE_URL, true);
    const { events } = recorder();
    const rejected = failingFirst([refused]);
    let thrown: unknown;
    await runHandlerAttempts(rejected.run, policy, new AbortController().signal, events).catch((err: unknown) => (thrown = err));
    expect(thrown).to.equal(refused);
    expect(rejected.runs()).to.equal(1);

    const invalid = failingFirst([apiError(400, 'VALIDATION_FAILED'), apiError(400, 'VALIDATION_FAILED'), apiError(400, 'VALIDATION_FAILED')]);
    expect(await runHandlerAttempts(invalid.run, policy, new AbortController().signal, events)).to.equal(true);
    expect(invalid.runs()).to.equal(3);
  });

  it('a stop while the service is away ends the runs with the notification not done', async () => {
    const stopping = new AbortController();
    let runs = 0;
    const run = async () => {
      runs += 1;
      throw unreachable();
    };
    const { events } = recorder();
    const started = Date.now();
    setTimeout(() => stopping.abort(), 20);
    expect(await runHandlerAttempts(run, { max: 3, delayMs: 60_000 }, stopping.signal, events)).to.equal(false);
    expect(runs).to.equal(1);
    expect(Date.now() - started).to.be.below(10_000);
  });
});

describe('isServiceUnavailable', () => {
  it('follows cause chains, so a handler wrapping the SDK error is understood', () => {
    expect(isServiceUnavailable(new Error('reply failed', { cause: unreachable() }))).to.equal(true);
    expect(isServiceUnavailable(new Error('reply failed', { cause: apiError(503, 'AUTHORIZATION_UNAVAILABLE') }))).to.equal(true);
  });

  it('is false for the handler failing, a refused request and a refused token', () => {
    expect(isServiceUnavailable(new Error('bug'))).to.equal(false);
    expect(isServiceUnavailable(apiError(403, 'AUTHORIZATION_DENIED'))).to.equal(false);
    expect(isServiceUnavailable(apiError(500, 'INTERNAL'))).to.equal(false);
    expect(isServiceUnavailable(new ChatTokenRejectedError(apiError(401, 'TOKEN_REJECTED'), BASE_URL, false))).to.equal(false);
    expect(isServiceUnavailable('not an error')).to.equal(false);
  });
});
