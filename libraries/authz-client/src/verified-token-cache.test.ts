import { expect } from 'chai';
import type { VerifiedPrincipal } from './verified-principal.ts';
import { VerifiedTokenCache } from './verified-token-cache.ts';

function principal(id: string, expiresAtMs: number): VerifiedPrincipal {
  return { kind: 'user', id, expiresAt: new Date(expiresAtMs), tokenId: `jti-${id}`, clientId: 'app' };
}

describe('VerifiedTokenCache', () => {
  let now = 1_000_000;
  const clock = () => now;
  beforeEach(() => (now = 1_000_000));

  it('answers a remembered token until the TTL passes', () => {
    const cache = new VerifiedTokenCache({ ttlMs: 60_000, maxEntries: 10, now: clock });
    cache.set('t1', principal('u1', now + 3_600_000));
    now += 59_999;
    expect(cache.get('t1')?.id).to.equal('u1');
    now += 1;
    expect(cache.get('t1')).to.equal(undefined);
    expect(cache.size).to.equal(0);
  });

  it('never answers a token past its exp, even within the TTL', () => {
    const cache = new VerifiedTokenCache({ ttlMs: 60_000, maxEntries: 10, now: clock });
    cache.set('t1', principal('u1', now + 5_000));
    now += 4_999;
    expect(cache.get('t1')?.id).to.equal('u1');
    now += 1;
    expect(cache.get('t1')).to.equal(undefined);
  });

  it('drops the oldest entry when full', () => {
    const cache = new VerifiedTokenCache({ ttlMs: 60_000, maxEntries: 2, now: clock });
    cache.set('a', principal('a', now + 3_600_000));
    cache.set('b', principal('b', now + 3_600_000));
    cache.set('c', principal('c', now + 3_600_000));
    expect(cache.get('a')).to.equal(undefined);
    expect(cache.get('b')?.id).to.equal('b');
    expect(cache.get('c')?.id).to.equal('c');
    expect(cache.size).to.equal(2);
  });

  it('remembers nothing when the TTL is 0', () => {
    const cache = new VerifiedTokenCache({ ttlMs: 0, maxEntries: 10, now: clock });
    cache.set('a', principal('a', now + 3_600_000));
    expect(cache.get('a')).to.equal(undefined);
  });

  it('hands out frozen principals, so one request cannot change what the next one sees', () => {
    const cache = new VerifiedTokenCache({ ttlMs: 60_000, maxEntries: 10, now: clock });
    cache.set('a', principal('a', now + 3_600_000));
    expect(Object.isFrozen(cache.get('a'))).to.equal(true);
  });
});
