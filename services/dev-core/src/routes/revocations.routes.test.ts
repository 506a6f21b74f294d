import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, SERVICE_TOKEN, startTestDevCore } from '../../test/dev-core-harness.ts';

const service = { authorization: `Bearer ${SERVICE_TOKEN}` };
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string; client_id: string };

describe('dev-core revocations', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());
  afterEach(async () => {
    core.replaceFixture(await demoFixture());
  });

  /** Each test revokes its own token IDs and apps: revocations made after start last for good. */
  let n = 0;
  const fresh = (what: string) => `${what}-${++n}-${Date.now()}`;
  const user = (id: string, tokenId: string, clientId = 'dev-core-demo-app') => ({ kind: 'user', id, tokenId, clientId });
  const revoke = (body: unknown) => call(core.url, 'POST', '/dev/revocations', body);
  const decide = async (principal: object, repositoryId: string = DEMO.repository) =>
    (await call(core.url, 'POST', '/internal/v1/authorize', { principal, repositoryId, action: 'read' }, service)).body.decision as string;

  it('a revoked token ID is principal_invalid on every scope, known or not; other tokens of the user are unaffected', async () => {
    const [revoked, other] = [fresh('jti'), fresh('jti')];
    expect(await decide(user('u_alice', revoked))).to.equal('allow');
    const answer = await revoke({ jti: revoked });
    expect(answer.status).to.equal(200);
    expect(answer.body.revocations).to.deep.include({ jti: revoked });
    for (const repositoryId of [DEMO.repository, DEMO.archivedRepository, '01JGFJK3W8GE2RMDX78EQVVVR6']) {
      expect(await decide(user('u_alice', revoked), repositoryId), repositoryId).to.equal('principal_invalid');
    }
    const batch = await call(core.url, 'POST', '/internal/v1/authorize/batch', {
      requests: [
        { principal: user('u_alice', revoked), repositoryId: DEMO.repository, action: 'read' },
        { principal: user('u_alice', other), repositoryId: DEMO.repository, action: 'read' },
      ],
    }, service);
    expect(batch.body.decisions.map((d: { decision: string }) => d.decision)).to.deep.equal(['principal_invalid', 'allow']);
    // Refusals look alike whatever the scope: nothing about the repository leaks.
    const refusal = (await call(core.url, 'POST', '/internal/v1/authorize', { principal: user('u_alice', revoked), repositoryId: DEMO.repository, action: 'read' }, service)).body;
    expect(refusal).to.have.all.keys('decision', 'decisionId', 'scopeState');
    expect(refusal.scopeState).to.equal('active');
  });

  it('a bot token can be revoked by its token ID too', async () => {
    const jti = fresh('bot-jti');
    const bot = { kind: 'bot', id: 'b_ci', credentialId: 'c_1', tokenId: jti };
    expect(await decide(bot)).to.equal('allow');
    await revoke({ jti });
    expect(await decide(bot)).to.equal('principal_invalid');
    expect(await decide({ ...bot, tokenId: fresh('bot-jti') })).to.equal('allow');
  });

  it("uninstalling an app for one user refuses that user's tokens of the app only", async () => {
    const app = fresh('app');
    expect((await revoke({ clientId: app, subjectId: 'u_alice' })).status).to.equal(200);
    expect(await decide(user('u_alice', fresh('jti'), app))).to.equal('principal_invalid');
    expect(await decide(user('u_alice', fresh('jti')))).to.equal('allow');
    expect(await decide(user('u_bob', fresh('jti'), app))).to.equal('allow');
  });

  it('uninstalling an app for everyone refuses every token of the app', async () => {
    const app = fresh('app');
    await revoke({ clientId: app });
    expect(await decide(user('u_alice', fresh('jti'), app))).to.equal('principal_invalid');
    expect(await decide(user('u_bob', fresh('jti'), app))).to.equal('principal_invalid');
    expect(await decide(user('u_bob', fresh('jti')))).to.equal('allow');
  });

  it('a fixture may list revocations; revocations made live outlast a fixture replacement', async () => {
    const [listed, live] = [fresh('jti'), fresh('jti')];
    const app = fresh('app');
    core.replaceFixture({ ...(await demoFixture()), revocations: [{ jti: listed }, { clientId: app, subjectId: 'u_bob' }] });
    expect(await decide(user('u_alice', listed))).to.equal('principal_invalid');
    expect(await decide(user('u_bob', fresh('jti'), app))).to.equal('principal_invalid');
    await revoke({ jti: live });
    core.replaceFixture(await demoFixture());
    expect(await decide(user('u_alice', listed))).to.equal('allow');
    expect(await decide(user('u_alice', live))).to.equal('principal_invalid');
    expect((await call(core.url, 'GET', '/dev/revocations')).body.revocations).to.deep.include({ jti: live });
  });

  it('refuses a revoked core resource token at mention resolution like any other bad one', async () => {
    const targets = [{ kind: 'human', id: 'u_bob' }];
    const author = { kind: 'user', id: 'u_alice' };
    const resolve = (token: string) => call(core.url, 'POST', '/internal/v1/mentions/resolve', { repositoryId: DEMO.repository, targets, author }, { ...service, 'x-core-resource-authorization': `Bearer ${token}` });
    const byJti = await core.mintToken({ type: 'core_resource', subjectId: 'u_alice' });
    const app = fresh('app');
    const byApp = await core.mintToken({ type: 'core_resource', subjectId: 'u_alice', clientId: app });
    expect((await resolve(byJti)).status).to.equal(200);
    expect((await resolve(byApp)).status).to.equal(200);
    await revoke({ jti: claims(byJti).jti });
    await revoke({ clientId: app, subjectId: 'u_alice' });
    const invalid = await resolve('not.a.jwt');
    for (const token of [byJti, byApp]) {
      const answer = await resolve(token);
      expect({ status: answer.status, body: answer.body }).to.deep.equal({ status: invalid.status, body: invalid.body });
    }
  });

  it('answers 400 to a revocation that names neither or both, or a subject without an app', async () => {
    for (const body of [{}, { jti: 'a', clientId: 'b' }, { jti: 'a', subjectId: 'u_alice' }, { clientId: '' }, { subjectId: 'u_alice' }, [{ jti: 'a' }]]) {
      const answer = await revoke(body);
      expect(answer.status, JSON.stringify(body)).to.equal(400);
      expect(answer.body.error.code).to.equal('request_invalid');
    }
    const fixture = { ...(await demoFixture()), revocations: [{ jti: 'a', clientId: 'b' }] };
    expect(() => core.replaceFixture(fixture)).to.throw(/revocation/);
  });
});
