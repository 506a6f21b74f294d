import { expect } from 'chai';
import { backoffBounds, backoffDelay, parseRetryAfter, retryAfterDelay, sleep } from './backoff.ts';
import { ULID_PATTERN, newUlid } from './ulid.ts';

describe('backoff', () => {
  const bounds = backoffBounds({ baseDelayMs: 100, maxDelayMs: 1000 });
  const fixed = (r: number) => backoffBounds({ baseDelayMs: 100, maxDelayMs: 1000, random: () => r });

  it('grows exponentially, spans the whole of [0, step] (full jitter) and never exceeds the cap', () => {
    const steps = [100, 200, 400, 800, 1000, 1000, 1000];
    steps.forEach((step, attempt) => {
      expect(backoffDelay(attempt, fixed(0))).to.equal(0);
      expect(backoffDelay(attempt, fixed(0.5))).to.equal(step / 2);
      expect(backoffDelay(attempt, fixed(0.999999))).to.equal(step);
    });
    expect(backoffDelay(1e6, fixed(1))).to.equal(1000);
  });

  it("spreads a crowd's first retry over the whole first step, not its upper half", () => {
    // A seeded sequence: 1000 clients of one lost gateway.
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const first = backoffBounds({ baseDelayMs: 200, random });
    const delays = Array.from({ length: 1000 }, () => backoffDelay(0, first));
    expect(Math.min(...delays)).to.be.lessThan(10);
    expect(Math.max(...delays)).to.be.greaterThan(190);
    expect(delays.filter((d) => d < 100).length).to.be.within(400, 600);
  });

  it('jitters with Math.random by default: a fleet of clients does not retry in lockstep', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(3, bounds)));
    expect(delays.size).to.be.greaterThan(10);
  });

  it('waits at least Retry-After, plus full jitter, at most the given bound', () => {
    expect(retryAfterDelay(2, 0, fixed(0), 60_000)).to.equal(2000);
    expect(retryAfterDelay(2, 0, fixed(0.5), 60_000)).to.equal(2050);
    expect(retryAfterDelay(2, 3, fixed(0.999999), 60_000)).to.equal(2800);
    expect(retryAfterDelay(90, 0, fixed(0.5), 60_000)).to.equal(60_000);
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
