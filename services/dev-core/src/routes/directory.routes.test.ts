import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, startTestDevCore } from '../../test/dev-core-harness.ts';
import { authorizeQuery, authorizeRequest, exchangeCode, pkcePair, signIn, tokenBody, VIEWER } from '../../test/oauth-client.ts';

const FULL_SCOPE = 'chat core:commits:read core:members:read';

/** The demo fixture with more readers: a bot whose grant lacks room:read, one whose grant is revoked, and u_carol installed. */
async function directoryFixture(): Promise<Record<string, any>> {
  const fixture: Record<string, any> = await demoFixture();
  fixture['bots'].push(
    {
      id: 'b_poster',
      credentials: [{ id: 'c_poster', state: 'active' }],
      grants: [{ id: 'g_poster', repositoryId: DEMO.repository, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['message:append'], state: 'active' }],
    },
    {
      id: 'b_retired',
      credentials: [{ id: 'c_retired', state: 'active' }],
      grants: [{ id: 'g_retired', repositoryId: DEMO.repository, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['room:read'], state: 'revoked' }],
    },
  );
  fixture['installations'].push({ clientId: VIEWER.clientId, userId: 'u_carol', scopes: ['chat', 'core:commits:read', 'core:members:read'], state: 'active' });
  return fixture;
}

describe('dev-core member directory', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());
  beforeEach(async () => {
    core.replaceFixture(await directoryFixture());
  });

  /** Both tokens of a full handoff for `userId` with the viewer. */
  async function handoff(userId: string, scope = FULL_SCOPE): Promise<{ chat: string; core?: string }> {
    const { verifier, challenge } = pkcePair();
    const authorized = await authorizeRequest(core.url, 'api', authorizeQuery(challenge, { scope }), await signIn(core.url, userId));
    const answer = await exchangeCode(core.url, tokenBody(authorized.body.code, verifier));
    return { chat: answer.body.access_token, core: answer.body.core_access_token };
  }

  const readers = (token: string | undefined, repositoryId: string = DEMO.repository, query = '', origin?: string) =>
    call(core.url, 'GET', `/api/repositories/${repositoryId}/readers${query}`, undefined, {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(origin === undefined ? {} : { origin }),
    });

  const DEMO_READERS = [
    { kind: 'human', id: 'u_alice', role: 'write' },
    { kind: 'human', id: 'u_bob', role: 'read' },
    { kind: 'bot', id: 'b_ci' },
    { kind: 'bot', id: 'b_reader' },
  ];

  it('lists the members with their roles and the bots with an active room:read grant; not a bot that may only post, nor one whose grant is revoked', async () => {
    const { core: token } = await handoff('u_bob');
    const answer = await readers(token);
    expect(answer.status).to.equal(200);
    expect(answer.body).to.deep.equal({ readers: DEMO_READERS });
  });

  it('gives a branch room, a deleted one included, the readers of its repository; a branch of another repository is not found', async () => {
    const { core: token } = await handoff('u_alice');
    for (const branchId of [DEMO.activeBranch, DEMO.deletedBranch]) {
      const answer = await readers(token, DEMO.repository, `?branchId=${branchId}`);
      expect(answer.status, branchId).to.equal(200);
      expect(answer.body).to.deep.equal({ readers: DEMO_READERS });
    }
    const foreign = await readers(token, DEMO.repository, `?branchId=${DEMO.archivedRepositoryBranch}`);
    expect(foreign.status).to.equal(404);
    for (const bad of ['?branchId=not-a-ulid', `?branchId=${DEMO.activeBranch}&branchId=${DEMO.deletedBranch}`, '?limit=5']) {
      const answer = await readers(token, DEMO.repository, bad);
      expect(answer.status, bad).to.equal(400);
      expect(answer.body.error.code).to.equal('request_invalid');
    }
  });

  it('follows the live fixture: a member removed and a grant revoked leave the list at once', async () => {
    const { core: token } = await handoff('u_alice');
    const fixture = await directoryFixture();
    delete fixture['repositories'][0].members['u_bob'];
    fixture['bots'].find((b: { id: string }) => b.id === 'b_ci').grants[0].state = 'revoked';
    core.replaceFixture(fixture);
    expect((await readers(token)).body).to.deep.equal({ readers: [{ kind: 'human', id: 'u_alice', role: 'write' }, { kind: 'bot', id: 'b_reader' }] });
  });

  it('refuses an outsider: an unknown repository and one the human cannot read answer the same', async () => {
    const { core: token } = await handoff('u_carol');
    const unreadable = await readers(token);
    const unknown = await readers(token, '01JGFJK3W8GE2RMDX78EQVVVR6');
    expect(unreadable.status).to.equal(404);
    expect(unreadable.body.error.code).to.equal('repository_not_found');
    expect(unreadable.body).to.deep.equal(unknown.body);
  });

  it('needs the human core token with core:members:read: chat tokens, other scopes, revoked or uninstalled tokens are refused alike', async () => {
    const alice = await handoff('u_alice');
    const commitsOnly = await handoff('u_alice', 'chat core:commits:read');
    const minted = (await call(core.url, 'POST', '/dev/tokens', { type: 'core_resource', subjectId: 'u_alice' })).body.token as string;
    for (const token of [undefined, alice.chat, commitsOnly.core, minted, 'not.a.token', `${alice.core}x`]) {
      const answer = await readers(token);
      expect(answer.status).to.equal(401);
      expect(answer.body.error.code).to.equal('token_rejected');
    }
    expect((await readers(alice.core)).status).to.equal(200);

    const revoked = await handoff('u_alice');
    const { jti } = JSON.parse(Buffer.from(revoked.core!.split('.')[1]!, 'base64url').toString()) as { jti: string };
    await call(core.url, 'POST', '/dev/revocations', { jti });
    expect((await readers(revoked.core)).status).to.equal(401);

    const fixture = await directoryFixture();
    fixture['installations'].find((i: { userId: string }) => i.userId === 'u_alice').state = 'uninstalled';
    core.replaceFixture(fixture);
    expect((await readers(alice.core)).status).to.equal(401);
  });

  it('allows CORS for GET from registered app origins only, never with credentials', async () => {
    const { core: token } = await handoff('u_bob');
    const path = `${core.url}/api/repositories/${DEMO.repository}/readers`;
    const preflight = await fetch(path, {
      method: 'OPTIONS',
      headers: { origin: VIEWER.origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(VIEWER.origin);
    expect(preflight.headers.get('access-control-allow-methods')).to.equal('GET');
    expect(preflight.headers.get('access-control-allow-headers')).to.match(/authorization/i);
    expect(preflight.headers.get('access-control-allow-credentials')).to.equal(null);
    const allowed = await readers(token, DEMO.repository, '', VIEWER.origin);
    expect(allowed.status).to.equal(200);
    expect(allowed.body.readers).to.deep.equal(DEMO_READERS);
    const refused = await readers(token, DEMO.repository, '', 'http://127.0.0.1:9999');
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('origin_not_allowed');
    const refusedPreflight = await fetch(path, { method: 'OPTIONS', headers: { origin: 'http://127.0.0.1:9999', 'access-control-request-method': 'GET' } });
    expect(refusedPreflight.status).to.equal(403);
    expect(refusedPreflight.headers.get('access-control-allow-origin')).to.equal(null);
  });
});
