import { expect } from 'chai';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, SERVICE_TOKEN, startTestDevCore } from '../../test/dev-core-harness.ts';
import {
  authorizeQuery,
  authorizeRequest,
  exchangeCode,
  pkcePair,
  signIn,
  tokenBody,
  VIEWER,
  type RawAnswer,
} from '../../test/oauth-client.ts';

const service = { authorization: `Bearer ${SERVICE_TOKEN}` };
const TEN_MINUTES = 10 * 60 * 1000;

/** A second app: a callback with its own query, a declared scope nobody installed, and an uninstalled installation. */
const NARROW = { clientId: 'narrow-app', redirectUri: 'https://app.example/cb?tenant=1' } as const;

async function handoffFixture(): Promise<Record<string, any>> {
  const fixture = await demoFixture();
  (fixture['apps'] as unknown[]).push({ ...NARROW, scopes: ['chat', 'core:commits:read'] });
  (fixture['installations'] as unknown[]).push(
    { clientId: NARROW.clientId, userId: 'u_alice', scopes: ['chat', 'repo:admin'], state: 'active' },
    { clientId: NARROW.clientId, userId: 'u_bob', scopes: ['chat', 'core:commits:read'], state: 'uninstalled' },
  );
  return fixture;
}

function expectNoStore(answer: RawAnswer): void {
  expect(answer.headers.get('cache-control')).to.equal('no-store');
  expect(answer.headers.get('pragma')).to.equal('no-cache');
}

/** A refusal: JSON error, no redirect of any kind, nothing cacheable. */
function expectRefusal(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
  expect(answer.headers.get('location')).to.equal(null);
  expect(answer.headers.get('content-type')).to.match(/^application\/json/);
  expect(answer.body.error.code).to.equal(code);
  expectNoStore(answer);
}

describe('dev-core marketplace OAuth handoff', () => {
  let core: DevCoreHandle;
  let offset = 0;
  let alice: string;
  before(async () => {
    core = await startTestDevCore({ clock: () => Date.now() + offset });
  });
  after(() => core.close());
  beforeEach(async () => {
    offset = 0;
    core.replaceFixture(await handoffFixture());
    alice = await signIn(core.url, 'u_alice');
  });

  /** Runs the authorize API for the viewer as `cookie`'s user and returns the code. */
  async function codeFor(cookie: string, challenge: string, overrides: Record<string, string> = {}): Promise<string> {
    const answer = await authorizeRequest(core.url, 'api', authorizeQuery(challenge, overrides), cookie);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body.code as string;
  }

  const decide = async (token: string) => {
    const claims = decodeJwt(token);
    const principal = { kind: 'user', id: claims.sub, tokenId: claims.jti, clientId: claims['client_id'] };
    return (await call(core.url, 'POST', '/internal/v1/authorize', { principal, repositoryId: DEMO.repository, action: 'read' }, service)).body.decision as string;
  };

  describe('authorize', () => {
    it('answers the API with no-store and only the exact callback, a code and the unchanged state', async () => {
      const state = 'opaque state/with+odd=chars&?%20 and spaces~';
      const answer = await authorizeRequest(core.url, 'api', authorizeQuery(pkcePair().challenge, { state }), alice);
      expect(answer.status).to.equal(200);
      expectNoStore(answer);
      expect(answer.body).to.have.all.keys('redirectUri', 'code', 'state');
      expect(answer.body.redirectUri).to.equal(VIEWER.redirectUri);
      expect(answer.body.state).to.equal(state);
      expect(answer.body.code).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(JSON.stringify(answer.body)).to.not.include(alice.split('=')[1]);
    });

    it('sends the browser from the bridge to the exact registered callback with code and state only', async () => {
      const state = 'st & =?#x';
      const answer = await authorizeRequest(core.url, 'bridge', authorizeQuery(pkcePair().challenge, { state }), alice);
      expect(answer.status).to.equal(303);
      expectNoStore(answer);
      expect(answer.body).to.equal(undefined);
      expect(answer.headers.get('referrer-policy')).to.equal('no-referrer');
      const location = new URL(answer.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).to.equal(VIEWER.redirectUri);
      expect([...location.searchParams.keys()]).to.deep.equal(['code', 'state']);
      expect(location.searchParams.get('state')).to.equal(state);
      expect(answer.headers.get('location')).to.not.include(alice.split('=')[1]);

      // A registered callback with its own query keeps it, exactly.
      const narrow = await authorizeRequest(core.url, 'bridge', authorizeQuery(pkcePair().challenge, { client_id: NARROW.clientId, redirect_uri: NARROW.redirectUri }), alice);
      const narrowLocation = new URL(narrow.headers.get('location')!);
      expect([...narrowLocation.searchParams.keys()]).to.deep.equal(['tenant', 'code', 'state']);
      expect(narrowLocation.searchParams.get('tenant')).to.equal('1');
    });

    it('refuses without a live core session, never redirecting', async () => {
      for (const via of ['api', 'bridge'] as const) {
        for (const cookie of [undefined, 'core_session=forged-session-value', 'other=1']) {
          expectRefusal(await authorizeRequest(core.url, via, authorizeQuery(pkcePair().challenge), cookie), 401, 'session_required');
        }
      }
      // A session past its lifetime is no session.
      offset = 9 * 3600 * 1000;
      expectRefusal(await authorizeRequest(core.url, 'api', authorizeQuery(pkcePair().challenge), alice), 401, 'session_required');
    });

    it('never redirects on a validation failure: unknown client, altered callback, bad PKCE or state', async () => {
      const { challenge } = pkcePair();
      const cases: [Record<string, string | string[]>, number, string][] = [
        [{ client_id: 'no-such-app' }, 400, 'client_unknown'],
        [{ redirect_uri: 'https://evil.example/callback' }, 400, 'redirect_uri_mismatch'],
        [{ redirect_uri: `${VIEWER.redirectUri}/` }, 400, 'redirect_uri_mismatch'],
        [{ redirect_uri: `${VIEWER.redirectUri}?next=https://evil.example` }, 400, 'redirect_uri_mismatch'],
        [{ redirect_uri: `${VIEWER.redirectUri}x` }, 400, 'redirect_uri_mismatch'],
        [{ redirect_uri: 'http://127.0.0.1:8080/CALLBACK' }, 400, 'redirect_uri_mismatch'],
        [{ redirect_uri: 'http://localhost:8080/callback' }, 400, 'redirect_uri_mismatch'],
        [{ redirect_uri: NARROW.redirectUri }, 400, 'redirect_uri_mismatch'],
        [{ redirect_uri: '' }, 400, 'redirect_uri_mismatch'],
        [{ state: '' }, 400, 'request_invalid'],
        [{ state: 'line\nbreak' }, 400, 'request_invalid'],
        [{ code_challenge_method: 'plain' }, 400, 'request_invalid'],
        [{ code_challenge: 'short' }, 400, 'request_invalid'],
        [{ response_type: 'token' }, 400, 'request_invalid'],
        [{ scope: 'chat BAD!' }, 400, 'request_invalid'],
        [{ redirect_uri: [VIEWER.redirectUri, 'https://evil.example/cb'] }, 400, 'request_invalid'],
      ];
      for (const [overrides, status, code] of cases) {
        for (const via of ['api', 'bridge'] as const) {
          const answer = await authorizeRequest(core.url, via, { ...authorizeQuery(challenge), ...overrides }, alice);
          expectRefusal(answer, status, code);
          expect(JSON.stringify(answer.body), JSON.stringify(overrides)).to.not.match(/code"\s*:\s*"[A-Za-z0-9_-]{43}"/);
        }
      }
      for (const missing of ['client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method']) {
        const query = authorizeQuery(challenge);
        delete query[missing];
        const answer = await authorizeRequest(core.url, 'bridge', query, alice);
        expectRefusal(answer, 400, 'request_invalid');
        expect(answer.body.error.parameter).to.equal(missing);
      }
    });

    it('refuses a human whose installation is uninstalled or absent', async () => {
      const bob = await signIn(core.url, 'u_bob');
      const query = authorizeQuery(pkcePair().challenge, { client_id: NARROW.clientId, redirect_uri: NARROW.redirectUri });
      for (const via of ['api', 'bridge'] as const) {
        expectRefusal(await authorizeRequest(core.url, via, query, bob), 403, 'installation_inactive');
        expectRefusal(await authorizeRequest(core.url, via, authorizeQuery(pkcePair().challenge), await signIn(core.url, 'u_carol')), 403, 'installation_inactive');
      }
    });
  });

  describe('token exchange', () => {
    it('exchanges a code with its verifier for a chat token of the app, form-encoded or JSON', async () => {
      for (const json of [false, true]) {
        const { verifier, challenge } = pkcePair();
        const answer = await exchangeCode(core.url, tokenBody(await codeFor(alice, challenge), verifier), { json });
        expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
        expectNoStore(answer);
        expect(answer.body).to.include({ token_type: 'Bearer', expires_in: 3600, scope: 'chat core:commits:read' });
        const jwks = createLocalJWKSet((await call(core.url, 'GET', '/issuers/marketplace/jwks.json')).body);
        const chat = await jwtVerify(answer.body.access_token, jwks, { issuer: `${core.url}/marketplace`, audience: 'chat', typ: 'at+jwt' });
        expect(chat.payload).to.include({ sub: 'u_alice', client_id: VIEWER.clientId, scope: 'chat core:commits:read' });
        expect(chat.payload.jti).to.be.a('string');
        const coreToken = await jwtVerify(answer.body.core_access_token, jwks, { issuer: `${core.url}/marketplace`, audience: 'core', typ: 'at+jwt' });
        expect(coreToken.payload).to.include({ sub: 'u_alice', client_id: VIEWER.clientId, scope: 'core:commits:read' });
        expect(await decide(answer.body.access_token)).to.equal('allow');
      }
    });

    it('the token stops working when the app is uninstalled for the human (revocation by client_id)', async () => {
      const { verifier, challenge } = pkcePair();
      const bob = await signIn(core.url, 'u_bob');
      const token = (await exchangeCode(core.url, tokenBody(await codeFor(bob, challenge), verifier))).body.access_token as string;
      expect(await decide(token)).to.equal('allow');
      await call(core.url, 'POST', '/dev/revocations', { clientId: VIEWER.clientId, subjectId: 'u_bob' });
      expect(await decide(token)).to.equal('principal_invalid');
    });

    it('grants only scopes both declared by the app and on the active installation', async () => {
      const narrow = { client_id: NARROW.clientId, redirect_uri: NARROW.redirectUri };
      const cases: [string | undefined, string | undefined][] = [
        [undefined, 'chat'], // declared chat + core:commits:read; installed chat + repo:admin
        ['chat core:commits:read repo:admin', 'chat'],
        ['core:commits:read', undefined],
        ['repo:admin', undefined],
      ];
      for (const [scope, granted] of cases) {
        const { verifier, challenge } = pkcePair();
        const query = authorizeQuery(challenge, narrow);
        if (scope === undefined) delete query['scope'];
        else query['scope'] = scope;
        const authorized = await authorizeRequest(core.url, 'api', query, alice);
        if (granted === undefined) {
          expectRefusal(authorized, 403, 'scope_denied');
          continue;
        }
        expect(authorized.status).to.equal(200);
        const answer = await exchangeCode(core.url, tokenBody(authorized.body.code, verifier, narrow));
        expect(answer.body.scope, String(scope)).to.equal(granted);
        expect(decodeJwt(answer.body.access_token)['scope']).to.equal(granted);
        expect(answer.body).to.not.have.property('core_access_token');
      }
      // Asking the viewer for chat alone gives no core token.
      const { verifier, challenge } = pkcePair();
      const answer = await exchangeCode(core.url, tokenBody(await codeFor(alice, challenge, { scope: 'chat' }), verifier));
      expect(answer.body.scope).to.equal('chat');
      expect(answer.body).to.not.have.property('core_access_token');
    });

    it('a grant without the chat scope earns no chat token: the access token is core\'s own', async () => {
      const { verifier, challenge } = pkcePair();
      const answer = await exchangeCode(core.url, tokenBody(await codeFor(alice, challenge, { scope: 'core:commits:read' }), verifier));
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body.scope).to.equal('core:commits:read');
      for (const token of [answer.body.access_token, answer.body.core_access_token]) {
        expect(decodeJwt(token)).to.include({ aud: 'core', scope: 'core:commits:read' });
      }
      expect(answer.body.access_token).to.equal(answer.body.core_access_token);
    });

    it('refuses the exchange with invalid_scope when the grant holds no scope of an API that takes tokens', async () => {
      const fixture = await handoffFixture();
      fixture['apps'].push({ clientId: 'admin-app', redirectUri: 'https://admin.example/cb', scopes: ['repo:admin'] });
      fixture['installations'].push({ clientId: 'admin-app', userId: 'u_alice', scopes: ['repo:admin'], state: 'active' });
      core.replaceFixture(fixture);
      const admin = { client_id: 'admin-app', redirect_uri: 'https://admin.example/cb' };
      const { verifier, challenge } = pkcePair();
      const authorized = await authorizeRequest(core.url, 'api', authorizeQuery(challenge, { ...admin, scope: 'repo:admin' }), alice);
      expect(authorized.status).to.equal(200);
      const answer = await exchangeCode(core.url, tokenBody(authorized.body.code, verifier, admin));
      expectRefusal(answer, 400, 'invalid_scope');
      expect(answer.body).to.not.have.property('access_token');
    });

    it('a code is single-use: a replay is refused and revokes the tokens the code gave', async () => {
      const { verifier, challenge } = pkcePair();
      const code = await codeFor(alice, challenge);
      const first = await exchangeCode(core.url, tokenBody(code, verifier));
      expect(first.status).to.equal(200);
      expect(await decide(first.body.access_token)).to.equal('allow');
      const replay = await exchangeCode(core.url, tokenBody(code, verifier));
      expectRefusal(replay, 400, 'invalid_grant');
      expect(replay.body).to.not.have.property('access_token');
      expect(await decide(first.body.access_token)).to.equal('principal_invalid');
    });

    it('refuses a wrong verifier, and the code is spent by the attempt', async () => {
      const { verifier, challenge } = pkcePair();
      const code = await codeFor(alice, challenge);
      expectRefusal(await exchangeCode(core.url, tokenBody(code, pkcePair().verifier)), 400, 'invalid_grant');
      expectRefusal(await exchangeCode(core.url, tokenBody(code, verifier)), 400, 'invalid_grant');
      // The challenge itself is not a verifier either.
      const other = pkcePair();
      expectRefusal(await exchangeCode(core.url, tokenBody(await codeFor(alice, other.challenge), other.challenge)), 400, 'invalid_grant');
      expectRefusal(await exchangeCode(core.url, tokenBody(await codeFor(alice, other.challenge), 'too-short')), 400, 'request_invalid');
    });

    it('a code expires 10 minutes after it was issued', async () => {
      const early = pkcePair();
      const earlyCode = await codeFor(alice, early.challenge);
      const late = pkcePair();
      const lateCode = await codeFor(alice, late.challenge);
      offset = TEN_MINUTES - 1000;
      expect((await exchangeCode(core.url, tokenBody(earlyCode, early.verifier))).status).to.equal(200);
      offset = TEN_MINUTES;
      expectRefusal(await exchangeCode(core.url, tokenBody(lateCode, late.verifier)), 400, 'invalid_grant');
    });

    it('a code is bound to its client and its redirect URI', async () => {
      for (const overrides of [{ client_id: NARROW.clientId }, { redirect_uri: NARROW.redirectUri }, { redirect_uri: `${VIEWER.redirectUri}/` }] as Record<string, string>[]) {
        const { verifier, challenge } = pkcePair();
        const code = await codeFor(alice, challenge);
        expectRefusal(await exchangeCode(core.url, tokenBody(code, verifier, overrides)), 400, 'invalid_grant');
      }
      const { verifier } = pkcePair();
      expectRefusal(await exchangeCode(core.url, tokenBody('A'.repeat(43), verifier)), 400, 'invalid_grant');
      expectRefusal(await exchangeCode(core.url, tokenBody('x', verifier, { grant_type: 'password' })), 400, 'unsupported_grant_type');
      expectRefusal(await exchangeCode(core.url, {}), 400, 'request_invalid');
    });

    it('refuses the exchange when the installation was removed after the code was issued', async () => {
      const { verifier, challenge } = pkcePair();
      const code = await codeFor(alice, challenge);
      const fixture = await handoffFixture();
      fixture['installations'][0].state = 'uninstalled';
      core.replaceFixture(fixture);
      expectRefusal(await exchangeCode(core.url, tokenBody(code, verifier)), 400, 'invalid_grant');
    });

    it('allows registered app origins only, without credentials, and a refused origin spends no code', async () => {
      const preflight = await fetch(`${core.url}/api/marketplace/oauth/token`, {
        method: 'OPTIONS',
        headers: { origin: VIEWER.origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get('access-control-allow-origin')).to.equal(VIEWER.origin);
      expect(preflight.headers.get('access-control-allow-credentials')).to.equal(null);
      expect(preflight.headers.get('vary')).to.include('Origin');

      const evil = await fetch(`${core.url}/api/marketplace/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(evil.status).to.equal(403);
      expect(evil.headers.get('access-control-allow-origin')).to.equal(null);

      const { verifier, challenge } = pkcePair();
      const code = await codeFor(alice, challenge);
      const refused = await exchangeCode(core.url, tokenBody(code, verifier), { origin: 'https://evil.example' });
      expect(refused.status).to.equal(403);
      expect(refused.headers.get('access-control-allow-origin')).to.equal(null);
      // Another registered app's page cannot spend the viewer's code either.
      const other = pkcePair();
      const otherCode = await codeFor(alice, other.challenge);
      const fromOtherApp = await exchangeCode(core.url, tokenBody(otherCode, other.verifier), { origin: 'https://app.example' });
      expectRefusal(fromOtherApp, 400, 'invalid_grant');
      expect(fromOtherApp.headers.get('access-control-allow-origin')).to.equal('https://app.example');
      const allowed = await exchangeCode(core.url, tokenBody(code, verifier), { origin: VIEWER.origin });
      expect(allowed.status).to.equal(200);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal(VIEWER.origin);
    });
  });
});
