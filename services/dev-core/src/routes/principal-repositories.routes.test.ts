import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, SERVICE_TOKEN, startTestDevCore } from '../../test/dev-core-harness.ts';

const service = { authorization: `Bearer ${SERVICE_TOKEN}` };

/** A user as chat names it to core: with its token's `jti` and `client_id`. */
const user = (id: string, tokenId = `jti-${id}`, clientId = 'dev-core-demo-app') => ({ kind: 'user', id, tokenId, clientId });
const bot = (id: string, credentialId: string) => ({ kind: 'bot', id, credentialId });

/** A canonical ULID for test repository `n` (distinct, and sorted as `n` is). */
const repositoryId = (n: number) => `01JH${String(n).padStart(22, '0')}`;

describe('dev-core POST /internal/v1/principals/repositories', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());
  afterEach(async () => {
    await call(core.url, 'POST', '/dev/faults', { authorization: 'ok' });
    core.replaceFixture(await demoFixture());
  });

  const discover = (principal: object, headers: Record<string, string> = service) =>
    call(core.url, 'POST', '/internal/v1/principals/repositories', { principal, action: 'read' }, headers);
  const listed = async (principal: object) => {
    const { status, body } = await discover(principal);
    expect(status).to.equal(200);
    expect(body.decision).to.equal('allow');
    return body.repositories as Array<{ repositoryId: string; scopeState: string }>;
  };

  it("lists a user's repositories, any role, archived ones sealed, sorted by ID", async () => {
    expect(await listed(user('u_alice'))).to.deep.equal([
      { repositoryId: DEMO.repository, scopeState: 'active' },
      { repositoryId: DEMO.archivedRepository, scopeState: 'sealed' },
    ]);
    expect(await listed(user('u_bob'))).to.deep.equal([{ repositoryId: DEMO.repository, scopeState: 'active' }]);
    expect(await listed(user('u_carol'))).to.deep.equal([]);
  });

  it("lists a bot's repositories of active room:read grants, each once, archived ones sealed", async () => {
    const fixture: any = await demoFixture();
    const grant = (id: string, repository: string, capabilities: string[], state = 'active') => ({ id, repositoryId: repository, subject: { kind: 'organization', id: 'o_acme' }, capabilities, state });
    fixture.bots[0].grants.push(
      grant('g_again', DEMO.repository, ['room:read']),
      grant('g_archived', DEMO.archivedRepository, ['room:read']),
      grant('g_append_only', repositoryId(1), ['message:append']),
      grant('g_revoked', repositoryId(2), ['room:read'], 'revoked'),
      grant('g_unknown_repository', repositoryId(3), ['room:read']),
    );
    fixture.repositories.push(
      { id: repositoryId(1), state: 'active', members: {} },
      { id: repositoryId(2), state: 'active', members: {} },
    );
    core.replaceFixture(fixture);
    expect(await listed(bot('b_ci', 'c_1'))).to.deep.equal([
      { repositoryId: DEMO.repository, scopeState: 'active' },
      { repositoryId: DEMO.archivedRepository, scopeState: 'sealed' },
    ]);
    expect(await listed(bot('b_reader', 'c_reader'))).to.deep.equal([{ repositoryId: DEMO.repository, scopeState: 'active' }]);
  });

  it('lists exactly the repositories authorize allows a read on', async () => {
    const repositories = [DEMO.repository, DEMO.archivedRepository, repositoryId(9)];
    for (const principal of [user('u_alice'), user('u_bob'), user('u_carol'), bot('b_ci', 'c_1'), bot('b_reader', 'c_reader')]) {
      const readable = (await listed(principal)).map((r) => r.repositoryId);
      for (const id of repositories) {
        const decision = (await call(core.url, 'POST', '/internal/v1/authorize', { principal, repositoryId: id, action: 'read' }, service)).body;
        expect(readable.includes(id), `${JSON.stringify(principal)} on ${id}`).to.equal(decision.decision === 'allow');
      }
    }
  });

  it('follows the fixture live: a revoked grant or membership is gone from the next answer', async () => {
    expect(await listed(bot('b_ci', 'c_1'))).to.have.length(1);
    const fixture: any = await demoFixture();
    fixture.bots[0].grants[0].state = 'revoked';
    delete fixture.repositories[0].members.u_bob;
    core.replaceFixture(fixture);
    expect(await listed(bot('b_ci', 'c_1'))).to.deep.equal([]);
    expect(await listed(user('u_bob'))).to.deep.equal([]);
  });

  it('answers principal_invalid as authorize does: revoked or foreign credential, revoked token, uninstalled app, unnamed token', async () => {
    await call(core.url, 'POST', '/dev/revocations', { jti: 'jti-discovery-revoked' });
    await call(core.url, 'POST', '/dev/revocations', { clientId: 'discovery-uninstalled-app', subjectId: 'u_alice' });
    for (const principal of [
      bot('b_ci', 'c_2'),
      bot('b_ci', 'c_404'),
      bot('b_ci', 'c_reader'),
      bot('b_nobody', 'c_1'),
      { kind: 'bot', id: 'b_ci' },
      user('u_alice', 'jti-discovery-revoked'),
      user('u_alice', 'jti-other', 'discovery-uninstalled-app'),
      { kind: 'user', id: 'u_alice', clientId: 'dev-core-demo-app' },
      { kind: 'user', id: 'u_alice', tokenId: 'jti-1' },
    ]) {
      const { status, body } = await discover(principal);
      expect(status, JSON.stringify(principal)).to.equal(200);
      expect(body, JSON.stringify(principal)).to.deep.equal({ decision: 'principal_invalid' });
    }
    // The same user with another token of another app is unaffected.
    expect(await listed(user('u_alice', 'jti-other'))).to.have.length(2);
  });

  it('lists thousands of repositories in one answer', async () => {
    const count = 1500;
    const fixture: any = await demoFixture();
    const ids = Array.from({ length: count }, (_, i) => repositoryId(count - i));
    fixture.repositories.push(...ids.map((id, i) => ({ id, state: i % 10 === 0 ? 'archived' : 'active', members: { u_carol: 'read' } })));
    fixture.bots[1].grants.push(...ids.map((id, i) => ({ id: `g_many_${i}`, repositoryId: id, subject: { kind: 'user', id: 'u_alice' }, capabilities: ['room:read'], state: 'active' })));
    core.replaceFixture(fixture);
    const expected = [...ids].sort().map((id) => ({ repositoryId: id, scopeState: ids.indexOf(id) % 10 === 0 ? 'sealed' : 'active' }));
    expect(await listed(user('u_carol'))).to.deep.equal(expected);
    const forBot = await listed(bot('b_reader', 'c_reader'));
    expect(forBot).to.have.length(count + 1);
    expect(forBot.filter((r) => r.repositoryId !== DEMO.repository)).to.deep.equal(expected);
  });

  it('plays the faults like authorize, and refuses a call without the service token or with a bad body', async () => {
    await call(core.url, 'POST', '/dev/faults', { authorization: 'unavailable' });
    const unavailable = await discover(user('u_alice'));
    expect(unavailable.status).to.equal(503);
    await call(core.url, 'POST', '/dev/faults', { authorization: 'ok' });
    const unauthenticated = await discover(user('u_alice'), {});
    expect(unauthenticated.status).to.equal(401);
    expect(unauthenticated.body.error.code).to.equal('service_unauthenticated');
    const path = '/internal/v1/principals/repositories';
    expect((await call(core.url, 'POST', path, { principal: user('u_alice'), action: 'write' }, service)).status).to.equal(400);
    expect((await call(core.url, 'POST', path, { action: 'read' }, service)).status).to.equal(400);
    expect((await call(core.url, 'POST', path, { principal: { kind: 'org', id: 'o_acme' }, action: 'read' }, service)).status).to.equal(400);
  });
});
