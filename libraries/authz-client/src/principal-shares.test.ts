import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { pino } from 'pino';
import { createCoreClient } from './core-client.ts';
import { PrincipalShares } from './principal-shares.ts';

const SERVICE_TOKEN = 'authz-client-test-service-token';
const REPO = '01JGFJJZ00QNYBVPQTAT49MN0F';
const userPrincipal = (id: string) => ({ kind: 'user' as const, id, tokenId: `jti-${id}`, clientId: 'dev-core-demo-app' });

/** A promise with its resolver, to hold an authorization pending as long as a test needs. */
function held(): { promise: Promise<string>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<string>((resolve) => (release = () => resolve('allow')));
  return { promise, release };
}

describe('PrincipalShares', () => {
  it('refuses a principal past its share at once with 503 AUTHORIZATION_UNAVAILABLE and Retry-After; others go on', async () => {
    const shares = new PrincipalShares(2);
    const a = [held(), held()];
    const running = a.map((h) => shares.run('user:u_a', () => h.promise));
    const refused = await shares.run('user:u_a', () => Promise.resolve('never asked')).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(AppError);
    expect(refused).to.include({ code: 'AUTHORIZATION_UNAVAILABLE', status: 503, retryAfterSeconds: 1 });
    expect((refused as AppError).message).to.match(/2 authorizations of this principal already wait for the core service/);
    expect(await shares.run('user:u_b', () => Promise.resolve('allow'))).to.equal('allow');
    expect(await shares.run('bot:u_a', () => Promise.resolve('allow')), 'a bot and a user of one ID are two principals').to.equal('allow');

    a[0]!.release();
    await running[0];
    expect(shares.pending('user:u_a')).to.equal(1);
    expect(await shares.run('user:u_a', () => Promise.resolve('allow')), 'a freed place is taken again').to.equal('allow');
    a[1]!.release();
    await Promise.all(running);
    expect(shares.principals, 'nothing is remembered of principals with nothing pending').to.equal(0);
  });

  it('frees a place when the authorization fails', async () => {
    const shares = new PrincipalShares(1);
    const failed = await shares.run('user:u_a', () => Promise.reject(new Error('core down'))).catch((err: unknown) => err);
    expect((failed as Error).message).to.equal('core down');
    expect(shares.pending('user:u_a')).to.equal(0);
    expect(await shares.run('user:u_a', () => Promise.resolve('allow'))).to.equal('allow');
  });

  it('refuses a share below 1', () => {
    expect(() => new PrincipalShares(0)).to.throw(RangeError);
  });
});

describe('createCoreClient: each principal gets its share of authorizations (against a slow dev-core)', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: pino({ level: 'silent' }) });
  });
  after(() => core.close());

  it('one principal flooding cannot fill the shared queue: another principal is still answered', async () => {
    core.setFaults({ authorization: 'slow', latencyMs: 200 });
    // The queue all principals share holds 1,024 authorizations: this flood alone would fill it.
    const client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 2000, maxAuthorizationsPerPrincipal: 16 });
    const flood = Array.from({ length: 2000 }, () =>
      client.authorize({ principal: userPrincipal('u_bob'), repositoryId: REPO, action: 'read' }).then(
        () => 'allowed',
        (err: unknown) => (err as AppError).message,
      ),
    );
    const started = performance.now();
    const other = await client.authorize({ principal: userPrincipal('u_alice'), repositoryId: REPO, action: 'read' });
    const otherMs = performance.now() - started;
    const outcomes = await Promise.all(flood);

    expect(other.decision).to.equal('allow');
    expect(otherMs, 'the other principal waits for about one slow call, not for the flood').to.be.below(1000);
    expect(outcomes.filter((o) => o === 'allowed')).to.have.length(16);
    expect(outcomes.filter((o) => /16 authorizations of this principal already wait/.test(o))).to.have.length(2000 - 16);
    core.setFaults({ authorization: 'ok' });
  });
});
