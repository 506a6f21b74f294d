import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, startTestDevCore } from '../../test/dev-core-harness.ts';
import { authorizeQuery, authorizeRequest, exchangeCode, pkcePair, signIn, tokenBody, VIEWER } from '../../test/oauth-client.ts';

/** Two commits sharing their first 9 digits, so a 7-digit abbreviation of either is ambiguous. */
const TWIN_A = 'abcdef12340000000000000000000000000000aa';
const TWIN_B = 'abcdef123ffffffffffffffffffffffffffffffb';
const LONE = '0123456789abcdef0123456789abcdef01234567';

async function lookupFixture(): Promise<Record<string, any>> {
  const fixture: Record<string, any> = await demoFixture();
  fixture['repositories'][0].commits = [TWIN_A, TWIN_B, LONE];
  fixture['installations'].push({ clientId: VIEWER.clientId, userId: 'u_carol', scopes: ['chat', 'core:commits:read'], state: 'active' });
  return fixture;
}

describe('dev-core commit look-up', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());
  beforeEach(async () => {
    core.replaceFixture(await lookupFixture());
  });

  /** Both tokens of a full handoff for `userId` with the viewer. */
  async function handoff(userId: string, scope = 'chat core:commits:read'): Promise<{ chat: string; core?: string }> {
    const { verifier, challenge } = pkcePair();
    const authorized = await authorizeRequest(core.url, 'api', authorizeQuery(challenge, { scope }), await signIn(core.url, userId));
    const answer = await exchangeCode(core.url, tokenBody(authorized.body.code, verifier));
    return { chat: answer.body.access_token, core: answer.body.core_access_token };
  }

  const lookup = (token: string | undefined, candidates: unknown, repositoryId: string = DEMO.repository, origin?: string) =>
    call(core.url, 'POST', `/api/repositories/${repositoryId}/commits/lookup`, { candidates }, {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(origin === undefined ? {} : { origin }),
    });

  it('resolves full IDs and unique abbreviations case-insensitively, in order; unknown and ambiguous ones resolve to nothing', async () => {
    const { core: token } = await handoff('u_alice');
    const answer = await lookup(token, [LONE, 'ABCDEF1234', 'abcdef1', 'abcdef123f', '0123456', 'deadbeef', TWIN_A.toUpperCase()]);
    expect(answer.status).to.equal(200);
    expect(answer.body).to.deep.equal({
      results: [
        { candidate: LONE, sha: LONE },
        { candidate: 'ABCDEF1234', sha: TWIN_A },
        { candidate: 'abcdef1', sha: null },
        { candidate: 'abcdef123f', sha: TWIN_B },
        { candidate: '0123456', sha: LONE },
        { candidate: 'deadbeef', sha: null },
        { candidate: TWIN_A.toUpperCase(), sha: TWIN_A },
      ],
    });
  });

  it('answers an archived repository the human can read; a repository without commits resolves nothing', async () => {
    const { core: token } = await handoff('u_alice');
    const fixture = await lookupFixture();
    const archivedCommit = fixture['repositories'][1].commits[0] as string;
    expect((await lookup(token, [archivedCommit.slice(0, 8)], DEMO.archivedRepository)).body.results).to.deep.equal([{ candidate: archivedCommit.slice(0, 8), sha: archivedCommit }]);
    delete fixture['repositories'][0].commits;
    core.replaceFixture(fixture);
    expect((await lookup(token, [LONE])).body.results).to.deep.equal([{ candidate: LONE, sha: null }]);
  });

  it('takes 1 to 100 candidates of 7 to 40 hexadecimal characters', async () => {
    const { core: token } = await handoff('u_alice');
    const hundred = Array.from({ length: 100 }, (_, i) => i.toString(16).padStart(7, '0'));
    expect((await lookup(token, hundred)).status).to.equal(200);
    for (const bad of [[], [...hundred, 'fffffff'], ['abcdef'], ['a'.repeat(41)], ['abcdefg'], [1234567], 'abcdef1']) {
      const answer = await lookup(token, bad);
      expect(answer.status, JSON.stringify(bad).slice(0, 40)).to.equal(400);
      expect(answer.body.error.code).to.equal('request_invalid');
    }
  });

  it('needs the human core token with core:commits:read: chat tokens, other scopes, revoked or uninstalled tokens are refused alike', async () => {
    const alice = await handoff('u_alice');
    const mentionsOnly = (await call(core.url, 'POST', '/dev/tokens', { type: 'core_resource', subjectId: 'u_alice' })).body.token as string;
    const chatOnly = await handoff('u_alice', 'chat');
    expect(chatOnly.core).to.equal(undefined);
    for (const token of [undefined, alice.chat, mentionsOnly, 'not.a.token', `${alice.core}x`]) {
      const answer = await lookup(token, [LONE]);
      expect(answer.status).to.equal(401);
      expect(answer.body.error.code).to.equal('token_rejected');
    }
    expect((await lookup(alice.core, [LONE])).status).to.equal(200);

    const revoked = await handoff('u_alice');
    const { jti } = JSON.parse(Buffer.from(revoked.core!.split('.')[1]!, 'base64url').toString()) as { jti: string };
    await call(core.url, 'POST', '/dev/revocations', { jti });
    expect((await lookup(revoked.core, [LONE])).status).to.equal(401);

    const fixture = await lookupFixture();
    fixture['installations'].find((i: { userId: string }) => i.userId === 'u_alice').state = 'uninstalled';
    core.replaceFixture(fixture);
    expect((await lookup(alice.core, [LONE])).status).to.equal(401);
  });

  it('answers an unknown repository and one the human cannot read the same way', async () => {
    const { core: token } = await handoff('u_carol');
    const unreadable = await lookup(token, [LONE]);
    const unknown = await lookup(token, [LONE], '01JGFJK3W8GE2RMDX78EQVVVR6');
    expect(unreadable.status).to.equal(404);
    expect(unreadable.body).to.deep.equal(unknown.body);
  });

  it('allows CORS from registered app origins only', async () => {
    const { core: token } = await handoff('u_bob');
    const path = `${core.url}/api/repositories/${DEMO.repository}/commits/lookup`;
    const preflight = await fetch(path, {
      method: 'OPTIONS',
      headers: { origin: VIEWER.origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(VIEWER.origin);
    expect(preflight.headers.get('access-control-allow-headers')).to.match(/authorization/i);
    expect(preflight.headers.get('access-control-allow-credentials')).to.equal(null);
    const allowed = await lookup(token, [LONE], DEMO.repository, VIEWER.origin);
    expect(allowed.status).to.equal(200);
    const refused = await lookup(token, [LONE], DEMO.repository, 'http://127.0.0.1:9999');
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('origin_not_allowed');
  });

  describe('fixture', () => {
    it('checks commit IDs, apps and installations, and reads a fixture without them back as written', async () => {
      const plain = await demoFixture();
      for (const key of ['apps', 'installations']) delete plain[key];
      for (const repository of plain['repositories'] as Record<string, unknown>[]) delete repository['commits'];
      const stored = await call(core.url, 'PUT', '/dev/fixture', plain);
      expect(stored.status).to.equal(200);
      expect(stored.body).to.deep.equal(plain);
      expect((await call(core.url, 'PUT', '/dev/fixture', await demoFixture())).body).to.deep.equal(await demoFixture());

      const broken: [string, (f: Record<string, any>) => void][] = [
        ['short commit', (f) => (f['repositories'][0].commits = ['abcdef1'])],
        ['upper-case commit', (f) => (f['repositories'][0].commits = [LONE.toUpperCase()])],
        ['callback with fragment', (f) => (f['apps'][0].redirectUri = 'http://127.0.0.1:8080/callback#x')],
        ['relative callback', (f) => (f['apps'][0].redirectUri = '/callback')],
        ['javascript callback', (f) => (f['apps'][0].redirectUri = 'javascript:alert(1)')],
        ['duplicate app', (f) => f['apps'].push(f['apps'][0])],
        ['duplicate installation', (f) => f['installations'].push(f['installations'][0])],
        ['installation state', (f) => (f['installations'][0].state = 'paused')],
        ['scope name', (f) => (f['apps'][0].scopes = ['Chat Scope'])],
      ];
      for (const [what, edit] of broken) {
        const fixture = await demoFixture();
        edit(fixture);
        const answer = await call(core.url, 'PUT', '/dev/fixture', fixture);
        expect(answer.status, what).to.equal(400);
        expect(answer.body.error.code).to.equal('fixture_invalid');
      }
    });
  });
});
