import { expect } from 'chai';
import { ManualClock, attempt, freshKey, runRateLimiterContract, windowStart } from '../../test/rate-limiter-contract.ts';
import { InProcessFixedWindowRateLimiter } from './in-process-fixed-window-rate-limiter.ts';

runRateLimiterContract('InProcessFixedWindowRateLimiter', async (options) => new InProcessFixedWindowRateLimiter(options));

describe('InProcessFixedWindowRateLimiter (specifics)', () => {
  it('keeps counting in the newest window when the clock steps back, so a clock jump frees no budget', async () => {
    const start = windowStart(10);
    const clock = new ManualClock(start + 10_500);
    const limiter = new InProcessFixedWindowRateLimiter({ limit: 1, windowSeconds: 10, clock: clock.read });
    const key = freshKey();
    await limiter.consume(key);
    clock.nowMs = start + 9_500;
    const refused = await attempt(limiter, key);
    expect(refused?.code).to.equal('RATE_LIMITED');
    expect(refused?.retryAfterSeconds).to.equal(11);
  });

  it('refuses settings that are not positive whole numbers at construction', () => {
    expect(() => new InProcessFixedWindowRateLimiter({ limit: 0 })).to.throw(RangeError);
    expect(() => new InProcessFixedWindowRateLimiter({ windowSeconds: 1.5 })).to.throw(RangeError);
  });

  it('uses the documented defaults: 60 appends per 60-second window', async () => {
    const clock = new ManualClock(windowStart(60));
    const limiter = new InProcessFixedWindowRateLimiter({ clock: clock.read });
    const key = freshKey();
    for (let i = 0; i < 60; i += 1) await limiter.consume(key);
    expect((await attempt(limiter, key))?.retryAfterSeconds).to.equal(60);
  });
});
