import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AppError } from '@chat/contracts';
import { fresh, runLeaseRegistryContract, sleep, tryAcquire, tryAcquireInbox } from '../../test/lease-registry-contract.ts';
import { REDIS_URL, TestKeyspace, UNREACHABLE_REDIS_URL, firstJsonLine, silentServer, startScript } from '../../test/redis-test-support.ts';
import { RedisStreamLeaseRegistry, type RedisStreamLeaseRegistryOptions } from './redis-stream-lease-registry.ts';
import { StreamLeaseLostError } from './stream-lease-lost-error.ts';

const keyspace = new TestKeyspace();
afterEach(() => keyspace.cleanUp());
after(() => keyspace.close());

runLeaseRegistryContract(
  'RedisStreamLeaseRegistry',
  async (options) => new RedisStreamLeaseRegistry({ ...options, redis: REDIS_URL, keyPrefix: keyspace.prefix('cap') }),
);

describe('RedisStreamLeaseRegistry (Redis specifics)', function () {
  this.timeout(20_000);
  const opened: RedisStreamLeaseRegistry[] = [];
  const open = (options: RedisStreamLeaseRegistryOptions): RedisStreamLeaseRegistry => {
    const registry = new RedisStreamLeaseRegistry(options);
    opened.push(registry);
    return registry;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((r) => r.close()));
  });

  it('names its connection after the deployment, the role and the process, so CLIENT LIST tells whose it is', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const registry = open({ redis: REDIS_URL, keyPrefix });
    await tryAcquire(registry, fresh('p'), fresh('r'));
    const names = ((await keyspace.admin.client('LIST')) as string).split('\n').map((line) => / name=(\S*)/.exec(line)?.[1]);
    expect(names).to.include(`${keyPrefix}:stream-leases:${process.pid}`);
  });

  it('keeps the caps across several gateways acquiring at once', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const gateways = Array.from({ length: 5 }, () => open({ redis: REDIS_URL, keyPrefix, principalCap: 5, roomCap: 7 }));
    const principal = fresh('p');
    const byPrincipal = await Promise.all(gateways.flatMap((g) => Array.from({ length: 20 }, () => tryAcquire(g, principal, fresh('r')))));
    expect(byPrincipal.filter((o) => !(o instanceof AppError))).to.have.length(5);
    const room = fresh('r');
    const byRoom = await Promise.all(gateways.flatMap((g) => Array.from({ length: 20 }, () => tryAcquire(g, fresh('p'), room))));
    expect(byRoom.filter((o) => !(o instanceof AppError))).to.have.length(7);
    // Refused room steps gave their principal slots back: only the 7 winners hold one.
    const principalSets = (await keyspace.keysOf(keyPrefix)).filter((k) => k.includes('{cap:p:') && !k.includes(principal));
    expect(principalSets).to.have.length(7);
  });

  it('sends the releases of one turn together: 300 streams closing at once free every slot in a few commands', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const registry = open({ redis: REDIS_URL, keyPrefix, principalCap: 1000, roomCap: 1000 });
    const room = fresh('r');
    const principals = Array.from({ length: 3 }, () => fresh('p'));
    const leases = await Promise.all(Array.from({ length: 300 }, (_, i) => registry.acquire({ principalKey: principals[i % 3]!, roomKey: room })));
    const zremCalls = async () => Number(/cmdstat_zrem:calls=(\d+)/.exec(await keyspace.admin.info('commandstats'))?.[1] ?? 0);
    const before = await zremCalls();
    await Promise.all(leases.map((lease) => lease.release()));
    // One ZREM per set (1 room + 3 principals); other suites' commands could only add a few.
    expect((await zremCalls()) - before).to.be.below(20);
    for (const key of await keyspace.keysOf(keyPrefix)) if (!key.includes('{cap:h:')) expect(await keyspace.admin.zcard(key), key).to.equal(0);
    // A lease released twice, or after the batch went out, stays harmless.
    await leases[0]!.release();
  });

  it('lays keys out as <prefix>:{cap:p|r|i:<key>} scored by server-clock expiry, and its liveness as <prefix>:{cap:h:<holder>}, every key with a TTL', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const registry = open({ redis: REDIS_URL, keyPrefix, leaseMs: 4_000 });
    const principal = fresh('p');
    const room = fresh('r');
    const lease = await registry.acquire({ principalKey: principal, roomKey: room });
    const inbox = await registry.acquireInbox({ principalKey: principal });
    const holderKey = `${keyPrefix}:{cap:h:${registry.holder}}`;
    expect(await keyspace.admin.pttl(holderKey)).to.be.within(1, 5_000);
    expect(lease.id.startsWith(`${registry.holder}.`)).to.equal(true);
    const keys = (await keyspace.keysOf(keyPrefix)).filter((key) => key !== holderKey).sort();
    const idOf = (key: string) => (key.includes('{cap:i:') ? inbox.id : lease.id);
    expect(keys).to.deep.equal([`${keyPrefix}:{cap:p:${principal}}`, `${keyPrefix}:{cap:r:${room}}`, `${keyPrefix}:{cap:i:${principal}}`].sort());
    const [seconds] = await keyspace.admin.time();
    for (const key of keys) {
      const ttl = await keyspace.admin.pttl(key);
      expect(ttl, key).to.be.within(1, 8_000);
      const score = Number(await keyspace.admin.zscore(key, idOf(key)));
      expect(score - Number(seconds) * 1000).to.be.within(2_000, 5_000);
    }
    await lease.release();
    await inbox.release();
    for (const key of keys) expect(await keyspace.admin.zcard(key)).to.equal(0);
  });

  it('releases its leases in Redis when closed, inbox leases included', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const registry = open({ redis: REDIS_URL, keyPrefix, principalCap: 2, inboxPrincipalCap: 2 });
    const principal = fresh('p');
    await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
    await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
    await registry.acquireInbox({ principalKey: principal });
    await registry.acquireInbox({ principalKey: principal });
    await registry.close();
    const other = open({ redis: REDIS_URL, keyPrefix, principalCap: 2, inboxPrincipalCap: 2 });
    await other.acquire({ principalKey: principal, roomKey: fresh('r') });
    await other.acquire({ principalKey: principal, roomKey: fresh('r') });
    await other.acquireInbox({ principalKey: principal });
    await other.acquireInbox({ principalKey: principal });
  });

  it('keeps the inbox cap across several gateways acquiring at once', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const gateways = Array.from({ length: 5 }, () => open({ redis: REDIS_URL, keyPrefix, inboxPrincipalCap: 6 }));
    const principal = fresh('p');
    const outcomes = await Promise.all(gateways.flatMap((g) => Array.from({ length: 20 }, () => tryAcquireInbox(g, principal))));
    expect(outcomes.filter((o) => !(o instanceof AppError))).to.have.length(6);
    expect(await keyspace.admin.zcard(gateways[0]!.inboxSetKey(principal))).to.equal(6);
  });

  it('frees the inbox slots of a killed gateway within leaseMs', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const leaseMs = 1_500;
    const principal = fresh('p');
    const gateway = startScript('hold-stream-leases.ts', [REDIS_URL, keyPrefix, principal, 'inbox', '3', String(leaseMs)]);
    try {
      const { ids } = await firstJsonLine<{ ids: string[] }>(gateway, 15_000);
      expect(ids).to.have.length(3);
      const registry = open({ redis: REDIS_URL, keyPrefix, inboxPrincipalCap: 3, leaseMs, retryAfterSeconds: 30 });
      expect(await keyspace.admin.zcard(registry.inboxSetKey(principal))).to.equal(3);
      await sleep(leaseMs * 1.5);
      expect(((await tryAcquireInbox(registry, principal)) as AppError).code).to.equal('STREAM_UNAVAILABLE');

      gateway.kill('SIGKILL');
      const killedAt = Date.now();
      const refused = (await tryAcquireInbox(registry, principal)) as AppError;
      expect(refused.code).to.equal('STREAM_UNAVAILABLE');
      expect(refused.retryAfterSeconds).to.be.within(1, Math.ceil(leaseMs / 1000));
      let freedAfter = -1;
      while (Date.now() - killedAt < leaseMs * 3) {
        if (!((await tryAcquireInbox(registry, principal)) instanceof AppError)) {
          freedAfter = Date.now() - killedAt;
          break;
        }
        await sleep(25);
      }
      expect(freedAfter).to.be.within(0, leaseMs + 200);
    } finally {
      gateway.kill('SIGKILL');
    }
  });

  it('frees the slots of a killed gateway within leaseMs, answering Retry-After from their expiry meanwhile', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const leaseMs = 1_500;
    const principal = fresh('p');
    const room = fresh('r');
    const gateway = startScript('hold-stream-leases.ts', [REDIS_URL, keyPrefix, principal, room, '3', String(leaseMs)]);
    try {
      const { ids } = await firstJsonLine<{ ids: string[] }>(gateway, 15_000);
      expect(ids).to.have.length(3);
      const registry = open({ redis: REDIS_URL, keyPrefix, principalCap: 3, roomCap: 3, leaseMs, retryAfterSeconds: 30 });
      // Past one lease, the child's renewals are what keep its slots.
      await sleep(leaseMs * 1.5);
      expect(((await tryAcquire(registry, principal, fresh('r'))) as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');

      gateway.kill('SIGKILL');
      const killedAt = Date.now();
      const refused = (await tryAcquire(registry, fresh('p'), room)) as AppError;
      expect(refused.code).to.equal('STREAM_ROOM_LIMIT');
      expect(refused.retryAfterSeconds).to.be.within(1, Math.ceil(leaseMs / 1000));
      let freedAfter = -1;
      while (Date.now() - killedAt < leaseMs * 3) {
        if (!((await tryAcquire(registry, principal, room)) instanceof AppError)) {
          freedAfter = Date.now() - killedAt;
          break;
        }
        await sleep(25);
      }
      expect(freedAfter).to.be.within(0, leaseMs + 200);
    } finally {
      gateway.kill('SIGKILL');
    }
  });

  it('frees the slots of a SIGKILLed holder within holderTtlMs of its death, long before its 30 s leases expire', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const leaseMs = 30_000;
    const principal = fresh('p');
    const room = fresh('r');
    const inboxHolder = startScript('hold-stream-leases.ts', [REDIS_URL, keyPrefix, principal, 'inbox', '2', String(leaseMs)]);
    const roomHolder = startScript('hold-stream-leases.ts', [REDIS_URL, keyPrefix, principal, room, '3', String(leaseMs)]);
    try {
      await firstJsonLine<{ ids: string[] }>(inboxHolder, 15_000);
      await firstJsonLine<{ ids: string[] }>(roomHolder, 15_000);
      const registry = open({ redis: REDIS_URL, keyPrefix, principalCap: 3, roomCap: 3, inboxPrincipalCap: 2, leaseMs });
      // Alive past its liveness key's life: its slots stay taken.
      await sleep(6_000);
      expect(((await tryAcquire(registry, principal, fresh('r'))) as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');
      expect(((await tryAcquire(registry, fresh('p'), room)) as AppError).code).to.equal('STREAM_ROOM_LIMIT');
      expect(((await tryAcquireInbox(registry, principal)) as AppError).code).to.equal('STREAM_UNAVAILABLE');

      inboxHolder.kill('SIGKILL');
      roomHolder.kill('SIGKILL');
      const killedAt = Date.now();
      const freed = async (attempt: () => Promise<unknown>): Promise<number> => {
        while (Date.now() - killedAt < leaseMs / 2) {
          if (!((await attempt()) instanceof AppError)) return Date.now() - killedAt;
          await sleep(100);
        }
        return -1;
      };
      const [roomFreed, inboxFreed] = await Promise.all([freed(() => tryAcquire(registry, principal, room)), freed(() => tryAcquireInbox(registry, principal))]);
      // The default holderTtlMs is 5 s; the leases would have held for 30.
      expect(roomFreed).to.be.within(0, 8_000);
      expect(inboxFreed).to.be.within(0, 8_000);
      // Every slot of the dead holder went, not only the one taken: the caps have their room back.
      await registry.acquire({ principalKey: principal, roomKey: room });
      await registry.acquire({ principalKey: principal, roomKey: room });
      expect(((await tryAcquire(registry, principal, room)) as AppError).code).to.equal('STREAM_PRINCIPAL_LIMIT');
      await registry.acquireInbox({ principalKey: principal });
    } finally {
      inboxHolder.kill('SIGKILL');
      roomHolder.kill('SIGKILL');
    }
  });

  it('answers 503 STREAM_UNAVAILABLE quickly when Redis is unreachable', async () => {
    const registry = open({ redis: UNREACHABLE_REDIS_URL, timeoutMs: 200 });
    const started = Date.now();
    const refused = await tryAcquire(registry, fresh('p'), fresh('r'));
    expect((refused as AppError).code).to.equal('STREAM_UNAVAILABLE');
    expect((refused as AppError).status).to.equal(503);
    expect(Date.now() - started).to.be.below(1_000);
  });

  it('answers 503 STREAM_UNAVAILABLE within timeoutMs when Redis accepts but never answers', async () => {
    const silent = await silentServer();
    try {
      const registry = open({ redis: silent.url, timeoutMs: 200 });
      const started = Date.now();
      const refused = await tryAcquire(registry, fresh('p'), fresh('r'));
      expect((refused as AppError).code).to.equal('STREAM_UNAVAILABLE');
      expect(Date.now() - started).to.be.within(150, 800);
      await registry.close();
    } finally {
      await silent.close();
    }
  });

  it('reports failed renewals and renews again once Redis answers', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    redis.on('error', () => undefined);
    await redis.connect();
    const errors: unknown[] = [];
    const leaseMs = 900;
    const registry = open({ redis, keyPrefix, leaseMs, timeoutMs: 200, onError: (err) => errors.push(err) });
    try {
      const principal = fresh('p');
      const lease = await registry.acquire({ principalKey: principal, roomKey: fresh('r') });
      const key = registry.principalSetKey(principal);
      redis.disconnect();
      await sleep(leaseMs / 3 + 150);
      expect(errors.length).to.be.greaterThan(0);
      await redis.connect();
      const before = Number(await keyspace.admin.zscore(key, lease.id));
      await sleep(leaseMs / 3 + 150);
      expect(Number(await keyspace.admin.zscore(key, lease.id))).to.be.greaterThan(before);
    } finally {
      await registry.close();
      redis.disconnect();
    }
  });

  it('spreads renewals over the renewal period by set, each set renewed once per period, not all sets in one burst', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const leaseMs = 3_000;
    const period = leaseMs / 3;
    const registry = open({ redis: REDIS_URL, keyPrefix, leaseMs, principalCap: 1_000, roomCap: 10 });
    try {
      const principal = fresh('p');
      const rooms = Array.from({ length: 100 }, () => fresh('r'));
      const leases = await Promise.all(rooms.map((room) => registry.acquire({ principalKey: principal, roomKey: room })));
      const scoresOf = () => Promise.all(rooms.map((room, i) => keyspace.admin.zscore(registry.roomSetKey(room), leases[i]!.id).then(Number)));
      const acquired = await scoresOf();
      await sleep(period + 300);
      const renewed = await scoresOf();
      // A slot's score is its server-clock expiry: each renewal moved it on, at the moment it ran.
      renewed.forEach((score, i) => expect(score, `room set ${i} renewed`).to.be.greaterThan(acquired[i]!));
      const renewedAt = renewed.map((score) => score - leaseMs);
      expect(Math.max(...renewedAt) - Math.min(...renewedAt), 'renewals spread over the period').to.be.above(period / 2);
    } finally {
      await registry.close();
    }
  });

  it('reports a lease whose slot vanished as lost, stops renewing it and frees its other slot', async () => {
    const keyPrefix = keyspace.prefix('cap');
    const errors: unknown[] = [];
    const registry = open({ redis: REDIS_URL, keyPrefix, leaseMs: 600, onError: (err) => errors.push(err) });
    const principal = fresh('p');
    const room = fresh('r');
    const lease = await registry.acquire({ principalKey: principal, roomKey: room });
    await keyspace.admin.zrem(registry.principalSetKey(principal), lease.id);
    await sleep(450);
    const lost = errors.filter((e): e is StreamLeaseLostError => e instanceof StreamLeaseLostError);
    expect(lost.map((e) => e.leaseId)).to.deep.equal([lease.id]);
    expect(await keyspace.admin.zscore(registry.roomSetKey(room), lease.id)).to.equal(null);
  });
});
