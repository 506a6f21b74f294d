import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, startTestDevCore } from '../../test/dev-core-harness.ts';
import { authorizeQuery, authorizeRequest, exchangeCode, pkcePair, signIn, tokenBody, VIEWER } from '../../test/oauth-client.ts';

const FULL_SCOPE = 'chat core:commits:read core:members:read';
/** A repository of the test fixture without names, that u_bob reads and u_alice does not. */
const NAMELESS = { repository: '01JGFJK3W8GE2RMDX78EQVVVR6', branch: '01JGFJK4AAGE2RMDX78EQVVVR7' };

/** The demo fixture, u_carol installed, and a nameless repository u_bob alone reads. */
async function listingFixture(): Promise<Record<string, any>> {
  const fixture: Record<string, any> = await demoFixture();
  fixture['repositories'].push({ id: NAMELESS.repository, state: 'active', branches: [{ id: NAMELESS.branch, state: 'active' }], members: { u_bob: 'write' } });
  fixture['installations'].push({ clientId: VIEWER.clientId, userId: 'u_carol', scopes: FULL_SCOPE.split(' '), state: 'active' });
  return fixture;
}

describe('dev-core repositories of a reader and branch look-up by name', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());
  beforeEach(async () => {
    core.replaceFixture(await listingFixture());
  });

  async function coreToken(userId: string, scope = FULL_SCOPE): Promise<string> {
    const { verifier, challenge } = pkcePair();
    const authorized = await authorizeRequest(core.url, 'api', authorizeQuery(challenge, { scope }), await signIn(core.url, userId));
    return (await exchangeCode(core.url, tokenBody(authorized.body.code, verifier))).body.core_access_token;
  }
  /** A GET with its status, parsed body and headers (the refusals' WWW-Authenticate, the CORS answer). */
  async function get(path: string, token: string | undefined, origin?: string): Promise<{ status: number; body: any; headers: Record<string, string> }> {
    const response = await fetch(`${core.url}${path}`, {
      headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...(origin === undefined ? {} : { origin }) },
    });
    return { status: response.status, body: await response.json(), headers: Object.fromEntries(response.headers) };
  }
  const lookup = (token: string | undefined, name: string, repositoryId: string = DEMO.repository) =>
    get(`/api/repositories/${repositoryId}/branches/lookup?name=${encodeURIComponent(name)}`, token);

  it('lists only the repositories the person reads, archived ones with their state, each with its role and its branches by name', async () => {
    const alice = await get('/api/user/repositories', await coreToken('u_alice'));
    expect(alice.status).to.equal(200);
    expect(alice.headers['cache-control']).to.equal('no-store');
    expect(alice.body).to.deep.equal({
      repositories: [
        { id: DEMO.archivedRepository, name: 'acme/legacy', state: 'archived', role: 'write', branches: [{ id: DEMO.archivedRepositoryBranch, name: 'main', state: 'active' }] },
        {
          id: DEMO.repository, name: 'acme/web', state: 'active', role: 'write',
          branches: [
            { id: DEMO.deletedBranch, name: 'feature/old-login', state: 'deleted' },
            { id: DEMO.activeBranch, name: 'main', state: 'active' },
          ],
        },
      ],
    });
    const bob = await get('/api/user/repositories', await coreToken('u_bob'));
    expect(bob.body.repositories.map((r: { id: string; name: string | null; role: string }) => [r.id, r.name, r.role])).to.deep.equal([
      [DEMO.repository, 'acme/web', 'read'],
      // Without a name core answers null, and the nameless entry comes after the named ones.
      [NAMELESS.repository, null, 'write'],
    ]);
    expect(bob.body.repositories[1].branches).to.deep.equal([{ id: NAMELESS.branch, name: null, state: 'active' }]);
  });

  it('shows an outsider nothing, and follows the live fixture when a membership is removed', async () => {
    const carol = await get('/api/user/repositories', await coreToken('u_carol'));
    expect(carol.status).to.equal(200);
    expect(carol.body).to.deep.equal({ repositories: [] });
    const token = await coreToken('u_bob');
    const fixture = await listingFixture();
    delete fixture['repositories'][0].members['u_bob'];
    core.replaceFixture(fixture);
    expect((await get('/api/user/repositories', token)).body.repositories.map((r: { id: string }) => r.id)).to.deep.equal([NAMELESS.repository]);
  });

  it('resolves a branch name to its ID within a readable repository: the live branch first, a deleted one by its name', async () => {
    const token = await coreToken('u_alice');
    expect((await lookup(token, 'main')).body).to.deep.equal({ branch: { id: DEMO.activeBranch, name: 'main', state: 'active' } });
    expect((await lookup(token, 'main', DEMO.archivedRepository)).body).to.deep.equal({ branch: { id: DEMO.archivedRepositoryBranch, name: 'main', state: 'active' } });
    expect((await lookup(token, 'feature/old-login')).body.branch.id).to.equal(DEMO.deletedBranch);

    // A new live branch takes the name of a deleted one: the name now means the live one.
    const reused = '01JGFJK5BBGE2RMDX78EQVVVR8';
    const fixture = await listingFixture();
    fixture['repositories'][0].branches.push({ id: reused, name: 'feature/old-login', state: 'active' });
    core.replaceFixture(fixture);
    expect((await lookup(token, 'feature/old-login')).body).to.deep.equal({ branch: { id: reused, name: 'feature/old-login', state: 'active' } });

    // Two live branches of one name would make the name ambiguous: core refuses such a fixture.
    fixture['repositories'][0].branches.push({ id: '01JGFJK7DDGE2RMDX78EQVVVRA', name: 'main', state: 'active' });
    const ambiguous = await call(core.url, 'PUT', '/dev/fixture', fixture);
    expect(ambiguous.status).to.equal(400);
    expect(ambiguous.body.error.code).to.equal('fixture_invalid');

    const missing = await lookup(token, 'nope');
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('branch_not_found');
    for (const query of ['', '?name=', '?name=a&name=b', '?name=main&x=1']) {
      const answer = await get(`/api/repositories/${DEMO.repository}/branches/lookup${query}`, token);
      expect(answer.status, query).to.equal(400);
      expect(answer.body.error.code).to.equal('request_invalid');
    }
  });

  it('answers a repository the person cannot read exactly as an unknown one', async () => {
    const carol = await coreToken('u_carol');
    const unreadable = await lookup(carol, 'main');
    const unknown = await lookup(carol, 'main', '01JGFJK6CCGE2RMDX78EQVVVR9');
    expect(unreadable.status).to.equal(404);
    expect(unreadable.body.error.code).to.equal('repository_not_found');
    expect(unreadable.body).to.deep.equal(unknown.body);
    expect((await lookup(await coreToken('u_alice'), 'main', NAMELESS.repository)).body).to.deep.equal(unknown.body);
  });

  it('needs the human core token with core:members:read on both endpoints', async () => {
    const commitsOnly = await coreToken('u_alice', 'chat core:commits:read');
    const minted = (await call(core.url, 'POST', '/dev/tokens', { type: 'core_resource', subjectId: 'u_alice' })).body.token as string;
    for (const token of [undefined, commitsOnly, minted, 'not.a.token']) {
      for (const answer of [await get('/api/user/repositories', token), await lookup(token, 'main')]) {
        expect(answer.status).to.equal(401);
        expect(answer.body.error.code).to.equal('token_rejected');
        expect(answer.headers['www-authenticate']).to.equal('Bearer scope="core:members:read"');
      }
    }
  });

  it('allows CORS for GET from registered app origins only', async () => {
    const token = await coreToken('u_bob');
    for (const path of ['/api/user/repositories', `/api/repositories/${DEMO.repository}/branches/lookup?name=main`]) {
      const preflight = await fetch(`${core.url}${path}`, { method: 'OPTIONS', headers: { origin: VIEWER.origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } });
      expect(preflight.status, path).to.equal(204);
      expect(preflight.headers.get('access-control-allow-origin')).to.equal(VIEWER.origin);
      expect(preflight.headers.get('access-control-allow-methods')).to.equal('GET');
      expect(preflight.headers.get('access-control-allow-credentials')).to.equal(null);
      const allowed = await get(path, token, VIEWER.origin);
      expect(allowed.status, path).to.equal(200);
      expect(allowed.headers['access-control-allow-origin']).to.equal(VIEWER.origin);
      const refused = await get(path, token, 'http://127.0.0.1:9999');
      expect(refused.status, path).to.equal(403);
      expect(refused.body.error.code).to.equal('origin_not_allowed');
    }
  });
});
