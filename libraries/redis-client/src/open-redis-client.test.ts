import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { openRedisClient, type RedisClientTuning } from './open-redis-client.ts';
import { withDeadline } from './with-deadline.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const tuning: RedisClientTuning = {
  connectionName: `redis-client-test-${process.pid}`,
  connectTimeoutMs: 1000,
  commandTimeoutMs: 1000,
  maxRetriesPerRequest: 1,
  offlineQueue: true,
  slotsRefreshIntervalMs: 10_000,
};

describe('openRedisClient', () => {
  it('names the connection as the tuning says, for a URL', async () => {
    const redis = openRedisClient(REDIS_URL, tuning) as Redis;
    try {
      expect(await redis.client('GETNAME')).to.equal(tuning.connectionName);
      expect(redis.options).to.include({ commandTimeout: 1000, connectTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: true, enableAutoPipelining: false });
    } finally {
      redis.disconnect();
    }
  });

  it("ignores the target's keyPrefix (keys carry their own) and lets the tuning override its timeouts", async () => {
    const url = new URL(REDIS_URL);
    const redis = openRedisClient({ host: url.hostname, port: Number(url.port || 6379), keyPrefix: 'ignored:', commandTimeout: 50 }, { ...tuning, autoPipelining: true }) as Redis;
    const plain = new Redis(REDIS_URL);
    const key = `redis-client-test:${randomUUID()}`;
    try {
      await redis.set(key, 'v', 'EX', 10);
      expect(await plain.get(key)).to.equal('v');
      expect(redis.options).to.include({ commandTimeout: 1000, enableAutoPipelining: true });
    } finally {
      await plain.del(key);
      plain.disconnect();
      redis.disconnect();
    }
  });

  it('without an offline queue, a command fails at once while Redis is unreachable', async () => {
    const redis = openRedisClient('redis://127.0.0.1:1', { ...tuning, offlineQueue: false, commandTimeoutMs: undefined, maxRetriesPerRequest: 0 });
    try {
      const started = Date.now();
      const failure = await redis.ping().then(() => null, (err: Error) => err);
      expect(failure).to.be.instanceOf(Error);
      expect(Date.now() - started).to.be.below(500);
    } finally {
      redis.disconnect();
    }
  });
});

describe('withDeadline', () => {
  it('passes the answer on when it comes in time', async () => {
    expect(await withDeadline(Promise.resolve(7), 100)).to.equal(7);
  });

  it('rejects once the deadline passes, after calling onTimeout', async () => {
    let timedOut = false;
    const never = new Promise<never>(() => undefined);
    const failure = await withDeadline(never, 30, () => (timedOut = true)).then(() => null, (err: Error) => err);
    expect(failure?.message).to.equal('redis did not answer within 30 ms');
    expect(timedOut).to.equal(true);
  });

  it('passes a failure of the work on, and swallows one that comes after the deadline', async () => {
    const failure = await withDeadline(Promise.reject(new Error('NOSCRIPT')), 100).then(() => null, (err: Error) => err);
    expect(failure?.message).to.equal('NOSCRIPT');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 40));
      const timedOut = await withDeadline(late, 10).then(() => null, (err: Error) => err);
      expect(timedOut?.message).to.equal('redis did not answer within 10 ms');
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
