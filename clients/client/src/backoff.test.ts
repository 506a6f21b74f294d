import { expect } from 'chai';
import { backoffBounds, backoffDelay, parseRetryAfter, sleep } from './backoff.ts';
import { ULID_PATTERN, newUlid } from './ulid.ts';

describe('backoff', () => {
  const bounds = backoffBounds({ baseDelayMs: 100, maxDelayMs: 1000 });

  it('grows exponentially, stays within [step/2, step] and never exceeds the cap', () => {
    const steps = [100, 200, 400, 800, 1000, 1000, 1000];
    steps.forEach((step, attempt) => {
      expect(backoffDelay(attempt, bounds, () => 0)).to.equal(step / 2);
      expect(backoffDelay(attempt, bounds, () => 0.999999)).to.equal(step);
    });
    expect(backoffDelay(1e6, bounds, () => 1)).to.equal(1000);
  });

  it('jitters: a fleet of clients does not retry in lockstep', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(3, bounds)));
    expect(delays.size).to.be.greaterThan(10);
  });

  it('reads Retry-After as integer seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).to.equal(7);
    expect(parseRetryAfter(null)).to.equal(undefined);
    expect(parseRetryAfter('soon')).to.equal(undefined);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).to.equal(3);
  });

  it('sleep rejects as soon as its signal aborts', async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    let caught: unknown;
    await pending.catch((error: unknown) => (caught = error));
    expect((caught as Error).message).to.equal('stop');
  });
});

describe('newUlid', () => {
  it('makes canonical, distinct ULIDs that sort by time', () => {
    const keys = Array.from({ length: 1000 }, () => newUlid());
    for (const key of keys) expect(key).to.match(ULID_PATTERN);
    expect(new Set(keys).size).to.equal(1000);
    expect(newUlid(1).slice(0, 10) < newUlid(Date.now()).slice(0, 10)).to.equal(true);
    expect(newUlid(0).slice(0, 10)).to.equal('0000000000');
    expect(newUlid(2 ** 48 - 1).slice(0, 10)).to.equal('7ZZZZZZZZZ');
  });
});
