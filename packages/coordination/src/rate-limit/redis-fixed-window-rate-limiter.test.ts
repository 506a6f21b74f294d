import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AppError } from '@chat/contracts';
import { ManualClock, attempt, freshKey, runRateLimiterContract, windowStart } from '../../test/rate-limiter-contract.ts';
import {
  REDIS_URL,
  TestKeyspace,
  UNREACHABLE_REDIS_URL,
  firstJsonLine,
  silentServer,
  startScript,
} from '../../test/redis-test-support.ts';
import { RedisFixedWindowRateLimiter, type RedisFixedWindowRateLimiterOptions } from './redis-fixed-window-rate-limiter.ts';

const keyspace = new TestKeyspace();
afterEach(() => keyspace.cleanUp());
after(() => keyspace.close());

runRateLimiterContract(
  'RedisFixedWindowRateLimiter',
  async (options) => new RedisFixedWindowRateLimiter({ ...options, redis: REDIS_URL, keyPrefix: keyspace.prefix('rl'), failureMode: 'closed' }),
);

describe('RedisFixedWindowRateLimiter (Redis specifics)', function () {
  this.timeout(20_000);
  const opened: RedisFixedWindowRateLimiter[] = [];
  const open = (options: RedisFixedWindowRateLimiterOptions): RedisFixedWindowRateLimiter => {
    const limiter = new RedisFixedWindowRateLimiter(options);
    opened.push(limiter);
    return limiter;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((l) => l.close()));
  });

  it('names its connection after the deployment, the role and the process, so CLIENT LIST tells whose it is', async () => {
    const keyPrefix = keyspace.prefix('rl');
    const limiter = open({ redis: REDIS_URL, keyPrefix, limit: 5, windowSeconds: 60, failureMode: 'closed' });
    expect(await attempt(limiter, freshKey())).to.equal(undefined);
    const names = ((await keyspace.admin.client('LIST')) as string).split('\n').map((line) => / name=(\S*)/.exec(line)?.[1]);
    expect(names).to.include(`${keyPrefix}:append-rate-limiter:${process.pid}`);
  });

  it('never lets more than the limit through when several instances on their own connections hammer one window', async () => {
    const keyPrefix = keyspace.prefix('rl');
    const clock = new ManualClock(windowStart(60) + 1_000);
    const instances = Array.from({ length: 6 }, () =>
      open({ redis: REDIS_URL, keyPrefix, limit: 25, windowSeconds: 60, clock: clock.read, failureMode: 'closed' }),
    );
    const key = freshKey();
    const outcomes = await Promise.all(instances.flatMap((limiter) => Array.from({ length: 40 }, () => attempt(limiter, key))));
    expect(outcomes.filter((o) => o === undefined)).to.have.length(25);
    expect(outcomes.filter((o) => o?.code === 'RATE_LIMITED')).to.have.length(240 - 25);
  });

  it('never lets more than the limit through across three API processes sharing one window', async () => {
    const keyPrefix = keyspace.prefix('rl');
    const nowMs = windowStart(60) + 1_000;
    const limit = 50;
    const startAt = Date.now() + 1_500;
    const children = Array.from({ length: 3 }, () =>
      startScript('hammer-append-rate.ts', [REDIS_URL, keyPrefix, String(limit), '60', String(nowMs), 'b_ci', 'repo:x', '150', String(startAt)]),
    );
    const reports = await Promise.all(children.map((child) => firstJsonLine<{ allowed: number; limited: number; failed: number }>(child, 15_000)));
    expect(reports.map((r) => r.failed)).to.deep.equal([0, 0, 0]);
    expect(reports.reduce((sum, r) => sum + r.allowed, 0)).to.equal(limit);
    expect(reports.reduce((sum, r) => sum + r.limited, 0)).to.equal(450 - limit);
    const keys = await keyspace.keysOf(keyPrefix);
    expect(keys).to.have.length(1);
    expect(await keyspace.admin.pttl(keys[0] as string)).to.be.within(1, 59_000);
  });

  it('lays keys out as <prefix>:{rl:<sender>}:<window>:<room or *> and gives every key a TTL to its window end', async () => {
    const keyPrefix = keyspace.prefix('rl');
    const start = windowStart(30);
    const clock = new ManualClock(start + 12_000);
    const perRoom = open({ redis: REDIS_URL, keyPrefix, limit: 5, windowSeconds: 30, clock: clock.read });
    const perSender = open({ redis: REDIS_URL, keyPrefix, limit: 5, windowSeconds: 30, scope: 'sender', clock: clock.read });
    const key = freshKey({ senderKind: 'bot', roomScopeKey: 'repo:01J0000000000000000000000A' });
    await perRoom.consume(key);
    await perSender.consume(key);
    clock.nowMs = start + 30_000;
    await perRoom.consume(key);
    const index = start / 30_000;
    const keys = (await keyspace.keysOf(keyPrefix)).sort();
    expect(keys).to.deep.equal(
      [
        `${keyPrefix}:{rl:bot:${key.senderId}}:${index}:*`,
        `${keyPrefix}:{rl:bot:${key.senderId}}:${index}:repo:01J0000000000000000000000A`,
        `${keyPrefix}:{rl:bot:${key.senderId}}:${index + 1}:repo:01J0000000000000000000000A`,
      ].sort(),
    );
    for (const k of keys) {
      const ttl = await keyspace.admin.pttl(k);
      expect(ttl, k).to.be.greaterThan(0);
      expect(ttl, k).to.be.at.most(k.includes(`:${index + 1}:`) ? 30_000 : 18_000);
    }
  });

  it('repairs a counter found without a TTL instead of leaving it forever', async () => {
    const keyPrefix = keyspace.prefix('rl');
    const start = windowStart(60);
    const clock = new ManualClock(start + 20_000);
    const limiter = open({ redis: REDIS_URL, keyPrefix, limit: 5, windowSeconds: 60, clock: clock.read });
    const key = freshKey();
    // What an INCR whose EXPIRE never ran leaves behind.
    await keyspace.admin.set(limiter.keyOf(key, start / 60_000), '5');
    expect(await keyspace.admin.pttl(limiter.keyOf(key, start / 60_000))).to.equal(-1);
    const refused = await attempt(limiter, key);
    expect(refused?.code).to.equal('RATE_LIMITED');
    expect(refused?.retryAfterSeconds).to.equal(40);
    expect(await keyspace.admin.pttl(limiter.keyOf(key, start / 60_000))).to.be.within(39_000, 40_000);
  });

  it('works on a borrowed connection and leaves it open on close', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const limiter = new RedisFixedWindowRateLimiter({ redis, keyPrefix: keyspace.prefix('rl'), limit: 1, windowSeconds: 60 });
      const key = freshKey();
      await limiter.consume(key);
      expect((await attempt(limiter, key))?.code).to.equal('RATE_LIMITED');
      await limiter.close();
      expect(await redis.ping()).to.equal('PONG');
    } finally {
      redis.disconnect();
    }
  });

  describe('with Redis unreachable or silent', () => {
    const timed = async (work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> => {
      const started = Date.now();
      try {
        await work();
        return { ms: Date.now() - started, error: undefined };
      } catch (error) {
        return { ms: Date.now() - started, error };
      }
    };

    it('fails open by default: the append goes through quickly and the failure is reported', async () => {
      const failures: unknown[] = [];
      const limiter = open({ redis: UNREACHABLE_REDIS_URL, timeoutMs: 200, limit: 1, onFailure: (err) => failures.push(err) });
      const key = freshKey();
      for (let i = 0; i < 3; i += 1) {
        const { ms, error } = await timed(() => limiter.consume(key));
        expect(error).to.equal(undefined);
        expect(ms).to.be.below(1_000);
      }
      expect(failures).to.have.length(3);
    });

    it('fails closed when asked: 503 STORE_UNAVAILABLE with Retry-After 1, quickly', async () => {
      const failures: unknown[] = [];
      const limiter = open({ redis: UNREACHABLE_REDIS_URL, timeoutMs: 200, failureMode: 'closed', onFailure: (err) => failures.push(err) });
      const { ms, error } = await timed(() => limiter.consume(freshKey()));
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).code).to.equal('STORE_UNAVAILABLE');
      expect((error as AppError).status).to.equal(503);
      expect((error as AppError).retryAfterSeconds).to.equal(1);
      expect(ms).to.be.below(1_000);
      expect(failures).to.have.length(1);
    });

    it('gives up on a Redis that accepts but never answers within timeoutMs, in both modes', async () => {
      const silent = await silentServer();
      try {
        const failOpen = open({ redis: silent.url, timeoutMs: 200 });
        const failClosed = open({ redis: silent.url, timeoutMs: 200, failureMode: 'closed' });
        const opened = await timed(() => failOpen.consume(freshKey()));
        expect(opened.error).to.equal(undefined);
        expect(opened.ms).to.be.within(150, 800);
        const closed = await timed(() => failClosed.consume(freshKey()));
        expect((closed.error as AppError).code).to.equal('STORE_UNAVAILABLE');
        expect(closed.ms).to.be.within(150, 800);
      } finally {
        await Promise.all(opened.splice(0).map((l) => l.close()));
        await silent.close();
      }
    });

    it('stays open even when the failure hook itself throws', async () => {
      const limiter = open({ redis: UNREACHABLE_REDIS_URL, timeoutMs: 200, onFailure: () => { throw new Error('log sink down'); } });
      expect(await attempt(limiter, freshKey())).to.equal(undefined);
    });
  });
});
