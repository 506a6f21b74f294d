import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import type { AppendRateKey, AppendRateLimiter, AppendRateScope } from '../src/rate-limit/append-rate-limiter.ts';

/** What the contract needs to open a limiter; `close` is called after each test. */
export interface ContractLimiterOptions {
  limit: number;
  windowSeconds: number;
  scope: AppendRateScope;
  clock: () => number;
}

export type OpenLimiter = (options: ContractLimiterOptions) => Promise<AppendRateLimiter & { close?(): Promise<void> }>;

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public nowMs: number) {}
  readonly read = (): number => this.nowMs;
}

/** The start of a window far from any other test's windows, so keys never collide across runs. */
export function windowStart(windowSeconds: number): number {
  const windowMs = windowSeconds * 1000;
  return (Math.floor(Date.now() / windowMs) + 1 + Math.floor(Math.random() * 1_000_000)) * windowMs;
}

let senderSeq = 0;
export function freshKey(overrides: Partial<AppendRateKey> = {}): AppendRateKey {
  senderSeq += 1;
  return { senderKind: 'user', senderId: `u_${process.pid}_${Date.now()}_${senderSeq}`, roomScopeKey: 'repo:01J0000000000000000000000A', ...overrides };
}

/** Runs `consume` and returns the AppError it threw, or undefined when it was allowed. */
export async function attempt(limiter: AppendRateLimiter, key: AppendRateKey): Promise<AppError | undefined> {
  try {
    await limiter.consume(key);
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

/** The behaviour every {@link AppendRateLimiter} must show, run against each implementation. */
export function runRateLimiterContract(name: string, open: OpenLimiter): void {
  describe(`${name} (append rate limiter contract)`, () => {
    const opened: Array<{ close?(): Promise<void> }> = [];
    const limiterWith = async (options: ContractLimiterOptions): Promise<AppendRateLimiter> => {
      const limiter = await open(options);
      opened.push(limiter);
      return limiter;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((l) => l.close?.()));
    });

    it('allows `limit` appends in a window, then answers 429 RATE_LIMITED with whole seconds until the reset', async () => {
      const start = windowStart(10);
      const clock = new ManualClock(start + 2_500);
      const limiter = await limiterWith({ limit: 3, windowSeconds: 10, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      for (let i = 0; i < 3; i += 1) expect(await attempt(limiter, key)).to.equal(undefined);
      const refused = await attempt(limiter, key);
      expect(refused?.code).to.equal('RATE_LIMITED');
      expect(refused?.status).to.equal(429);
      expect(refused?.retryAfterSeconds).to.equal(8);
    });

    it('rounds a part second left in the window up to a Retry-After of 1, never 0', async () => {
      const start = windowStart(5);
      // 800 ms before the reset: enough that a Redis counter, which expires in real time, outlives the test.
      const clock = new ManualClock(start + 4_200);
      const limiter = await limiterWith({ limit: 1, windowSeconds: 5, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      await limiter.consume(key);
      const refused = await attempt(limiter, key);
      expect(refused?.code).to.equal('RATE_LIMITED');
      expect(refused?.retryAfterSeconds).to.equal(1);
    });

    it('starts a fresh budget when the next aligned window begins', async () => {
      const start = windowStart(10);
      const clock = new ManualClock(start + 9_000);
      const limiter = await limiterWith({ limit: 2, windowSeconds: 10, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      await limiter.consume(key);
      await limiter.consume(key);
      expect((await attempt(limiter, key))?.code).to.equal('RATE_LIMITED');
      clock.nowMs = start + 10_000;
      expect(await attempt(limiter, key)).to.equal(undefined);
      expect(await attempt(limiter, key)).to.equal(undefined);
      expect((await attempt(limiter, key))?.retryAfterSeconds).to.equal(10);
    });

    it('with scope sender-room, gives each sender a budget per room, and users and bots separate budgets', async () => {
      const clock = new ManualClock(windowStart(60) + 1_000);
      const limiter = await limiterWith({ limit: 1, windowSeconds: 60, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      await limiter.consume(key);
      expect((await attempt(limiter, key))?.code).to.equal('RATE_LIMITED');
      expect(await attempt(limiter, { ...key, roomScopeKey: `${key.roomScopeKey}:branch:01J0000000000000000000000B` })).to.equal(undefined);
      expect(await attempt(limiter, { ...key, senderKind: 'bot' })).to.equal(undefined);
      expect(await attempt(limiter, freshKey({ roomScopeKey: key.roomScopeKey }))).to.equal(undefined);
    });

    it('with scope sender, shares one budget across every room', async () => {
      const clock = new ManualClock(windowStart(60) + 1_000);
      const limiter = await limiterWith({ limit: 2, windowSeconds: 60, scope: 'sender', clock: clock.read });
      const key = freshKey();
      await limiter.consume({ ...key, roomScopeKey: 'room-a' });
      await limiter.consume({ ...key, roomScopeKey: 'room-b' });
      expect((await attempt(limiter, { ...key, roomScopeKey: 'room-c' }))?.code).to.equal('RATE_LIMITED');
    });

    it('takes a refunded unit back into its window, once, so the budget allows one more', async () => {
      const clock = new ManualClock(windowStart(60) + 1_000);
      const limiter = await limiterWith({ limit: 2, windowSeconds: 60, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      await limiter.consume(key);
      const unit = await limiter.consume(key);
      expect((await attempt(limiter, key))?.code).to.equal('RATE_LIMITED');
      await unit.refund();
      await unit.refund();
      expect(await attempt(limiter, key)).to.equal(undefined);
      expect((await attempt(limiter, key))?.code).to.equal('RATE_LIMITED');
    });

    it('never moves a refund into a later window, nor into another budget', async () => {
      const start = windowStart(60);
      const clock = new ManualClock(start + 58_500);
      const limiter = await limiterWith({ limit: 1, windowSeconds: 60, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      const other = freshKey({ roomScopeKey: key.roomScopeKey });
      const old = await limiter.consume(key);
      const others = await limiter.consume(other);
      clock.nowMs = start + 60_000;
      await limiter.consume(key);
      await old.refund();
      expect((await attempt(limiter, key))?.code).to.equal('RATE_LIMITED');
      await others.refund();
      expect((await attempt(limiter, key))?.code).to.equal('RATE_LIMITED');
    });

    it('frees exactly the refunded units after many racing consumes', async () => {
      const clock = new ManualClock(windowStart(60) + 1_000);
      const limiter = await limiterWith({ limit: 10, windowSeconds: 60, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      // 10 of 20 racing consumes pass; 5 of those give their unit back; then exactly 5 of 8 more pass.
      const outcomes = await Promise.all(Array.from({ length: 20 }, async () => {
        try {
          return await limiter.consume(key);
        } catch {
          return undefined;
        }
      }));
      const units = outcomes.filter((u) => u !== undefined);
      expect(units).to.have.length(10);
      await Promise.all(units.slice(0, 5).map((u) => u.refund()));
      const again = await Promise.all(Array.from({ length: 8 }, () => attempt(limiter, key)));
      expect(again.filter((o) => o === undefined)).to.have.length(5);
    });

    it('lets exactly `limit` through when many appends race in one window', async () => {
      const clock = new ManualClock(windowStart(60) + 1_000);
      const limiter = await limiterWith({ limit: 10, windowSeconds: 60, scope: 'sender-room', clock: clock.read });
      const key = freshKey();
      const outcomes = await Promise.all(Array.from({ length: 100 }, () => attempt(limiter, key)));
      expect(outcomes.filter((o) => o === undefined)).to.have.length(10);
      expect(outcomes.filter((o) => o?.code === 'RATE_LIMITED')).to.have.length(90);
    });
  });
}
