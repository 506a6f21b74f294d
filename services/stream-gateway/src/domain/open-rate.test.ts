import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { OpenRate } from './open-rate.ts';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function refusal(rate: OpenRate): AppError {
  try {
    rate.admit();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('the open was admitted');
}

describe('OpenRate', () => {
  it('admits the burst at once, then refuses with 503 STREAM_UNAVAILABLE and an integer Retry-After', () => {
    const clock = manualClock();
    const rate = new OpenRate({ opensPerSecond: 10, burst: 5 }, clock.now, () => 0);
    for (let i = 0; i < 5; i++) rate.admit();
    const err = refusal(rate);
    expect(err.code).to.equal('STREAM_UNAVAILABLE');
    expect(err.status).to.equal(503);
    expect(err.retryAfterSeconds).to.equal(1);
  });

  it('refills at the configured rate and never above the burst', () => {
    const clock = manualClock();
    const rate = new OpenRate({ opensPerSecond: 10, burst: 5 }, clock.now, () => 0);
    for (let i = 0; i < 5; i++) rate.admit();
    clock.advance(100); // one token
    rate.admit();
    refusal(rate);
    clock.advance(60_000); // a long quiet spell refills the burst only
    for (let i = 0; i < 5; i++) rate.admit();
    refusal(rate);
  });

  it('spreads Retry-After over the seconds the refused crowd needs at this rate, bounded at 30', () => {
    const clock = manualClock();
    let r = 0;
    const rate = new OpenRate({ opensPerSecond: 100, burst: 1 }, clock.now, () => r);
    rate.admit();
    // 1000 refusals within one second at 100 opens/s: a spread of 10 seconds.
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      r = i / 1000;
      seen.add(refusal(rate).retryAfterSeconds!);
    }
    expect(Math.min(...seen)).to.equal(1);
    expect(Math.max(...seen)).to.equal(10);
    expect(seen.size).to.equal(10);

    const slow = new OpenRate({ opensPerSecond: 1, burst: 1 }, clock.now, () => 0.999_999);
    slow.admit();
    let last = 0;
    for (let i = 0; i < 500; i++) last = refusal(slow).retryAfterSeconds!;
    expect(last).to.equal(30);
  });

  it('sizes the spread from the last second: an old crowd does not lengthen a later refusal', () => {
    const clock = manualClock();
    const rate = new OpenRate({ opensPerSecond: 10, burst: 1 }, clock.now, () => 0.999_999);
    rate.admit();
    for (let i = 0; i < 100; i++) refusal(rate);
    expect(refusal(rate).retryAfterSeconds).to.equal(11); // ceil(101 / 10)
    clock.advance(5000);
    rate.admit(); // the burst, refilled
    expect(refusal(rate).retryAfterSeconds).to.equal(2); // the least spread
  });
});
