import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Cluster, Redis } from 'ioredis';
import { openRedisClient, type RedisConnectionRequest } from './open-redis-client.ts';
import { settleWithin, withDeadline, withDeadlineOrReconnect } from './with-deadline.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const request = (profile: RedisConnectionRequest['profile'], timeoutMs = 1000): RedisConnectionRequest => ({
  profile,
  name: `redis-client-test-${profile}-${process.pid}`,
  timeoutMs,
});

describe('openRedisClient', () => {
  it("names the connection, and tunes the backbone's to fail fast with no command timeout of its own", async () => {
    const redis = openRedisClient(REDIS_URL, request('backbone')) as Redis;
    try {
      expect(await redis.client('GETNAME')).to.equal(`redis-client-test-backbone-${process.pid}`);
      expect(redis.options).to.include({ connectTimeout: 1000, maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: false, enableOfflineQueue: true, enableAutoPipelining: false });
      expect(redis.options.commandTimeout).to.equal(undefined);
    } finally {
      redis.disconnect();
    }
  });

  it("ignores the target's keyPrefix (keys carry their own) and lets the profile override its timeouts", async () => {
    const url = new URL(REDIS_URL);
    const redis = openRedisClient({ host: url.hostname, port: Number(url.port || 6379), keyPrefix: 'ignored:', commandTimeout: 50 }, request('stream-leases', 200)) as Redis;
    const plain = new Redis(REDIS_URL);
    const key = `redis-client-test:${randomUUID()}`;
    try {
      await redis.set(key, 'v', 'EX', 10);
      expect(await plain.get(key)).to.equal('v');
      expect(redis.options).to.include({ commandTimeout: 200, connectTimeout: 500, maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: true, enableOfflineQueue: true, enableAutoPipelining: true });
    } finally {
      await plain.del(key);
      plain.disconnect();
      redis.disconnect();
    }
  });

  it('a blocking reader fails a command at once while Redis is unreachable', async () => {
    const redis = openRedisClient('redis://127.0.0.1:1', request('backbone-blocking'));
    try {
      const started = Date.now();
      const failure = await redis.ping().then(() => null, (err: Error) => err);
      expect(failure).to.be.instanceOf(Error);
      expect(Date.now() - started).to.be.below(500);
    } finally {
      redis.disconnect();
    }
  });

  it("opens a Cluster client for a Cluster target, its nodes tuned by the profile and without the target's keyPrefix", () => {
    const cluster = openRedisClient({ clusterNodes: [{ host: '127.0.0.1', port: 1 }], nodeOptions: { keyPrefix: 'ignored:', password: 'pw' } }, request('backbone-blocking', 700));
    try {
      expect(cluster).to.be.instanceOf(Cluster);
      const options = (cluster as Cluster).options;
      expect(options).to.include({ slotsRefreshTimeout: 700, slotsRefreshInterval: 60_000, enableOfflineQueue: false });
      expect(options.redisOptions).to.include({ keyPrefix: undefined, password: 'pw', connectTimeout: 700, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false });
    } finally {
      cluster.disconnect();
    }
  });
});

describe('withDeadlineOrReconnect', () => {
  it('drops and reopens a connection whose command missed the deadline', async () => {
    const redis = openRedisClient(REDIS_URL, request('backbone'));
    try {
      await redis.ping();
      let reconnecting = false;
      redis.once('reconnecting', () => (reconnecting = true));
      const failure = await withDeadlineOrReconnect(redis, new Promise<never>(() => undefined), 20).then(() => null, (err: Error) => err);
      expect(failure?.message).to.equal('redis did not answer within 20 ms');
      expect(await withDeadline(redis.ping(), 2000)).to.equal('PONG');
      expect(reconnecting).to.equal(true);
    } finally {
      redis.disconnect();
    }
  });
});

describe('settleWithin', () => {
  it('returns the failures of commands sent side by side', async () => {
    expect(await settleWithin([Promise.resolve(1), Promise.reject(new Error('NOSCRIPT'))], 100)).to.deep.equal([new Error('NOSCRIPT')]);
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
