import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { call, demoFixture, startTestDevCore } from '../../test/dev-core-harness.ts';
import { authorizeQuery, pkcePair, VIEWER } from '../../test/oauth-client.ts';

/** What a browser sends when it navigates. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('dev-core bridge pages and development sign-in', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());

  const bridgePath = (overrides: Record<string, string> = {}) =>
    `/oauth/authorize?${new URLSearchParams(authorizeQuery(pkcePair().challenge, overrides)).toString()}`;

  const navigate = (path: string, cookie?: string) =>
    fetch(`${core.url}${path}`, { redirect: 'manual', headers: { accept: BROWSER_ACCEPT, ...(cookie === undefined ? {} : { cookie }) } });

  const signInForm = (fields: Record<string, string>) =>
    fetch(`${core.url}/dev/session`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });

  it('signs a fixture user in with an HttpOnly cookie confined to /oauth; unknown users are refused', async () => {
    const response = await fetch(`${core.url}/dev/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"userId":"u_bob"}' });
    expect(response.status).to.equal(200);
    const cookie = response.headers.get('set-cookie') ?? '';
    expect(cookie).to.match(/^core_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).to.include('Path=/oauth').and.include('HttpOnly').and.include('SameSite=Lax');
    expect(response.headers.get('cache-control')).to.equal('no-store');
    const body = (await response.json()) as { userId: string; session: string };
    expect(body.userId).to.equal('u_bob');
    expect(cookie).to.include(body.session);
    expect((await call(core.url, 'POST', '/dev/session', { userId: 'u_nobody' })).status).to.equal(400);
    expect((await call(core.url, 'POST', '/dev/session', {})).status).to.equal(400);
  });

  it('shows a browser without a session the sign-in page, never a redirect: a sign-in heading, the app asking and one button per user', async () => {
    const path = bridgePath({ state: '"><script>alert(1)</script>' });
    const page = await navigate(path);
    expect(page.status).to.equal(401);
    expect(page.headers.get('location')).to.equal(null);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.headers.get('content-security-policy')).to.include("default-src 'none'");
    const html = await page.text();
    expect(html).to.match(/<h1>Sign in to core<\/h1>/);
    expect(html).to.include(`<strong>${VIEWER.clientId}</strong>`);
    expect(html, 'a sign-in page, not an error page').to.not.include('session_required').and.not.include('could not be authorized');
    for (const user of ['u_alice', 'u_bob', 'u_carol']) expect(html).to.include(`value="${user}"`);
    expect(html).to.not.include('<script>');
    expect(html).to.include('action="/dev/session"');
  });

  it("lets the sign-in form's redirects end at the registered callback's origin, and nowhere else", async () => {
    const formAction = async (path: string) => {
      const csp = (await navigate(path)).headers.get('content-security-policy') ?? '';
      return /(?:^|;\s*)form-action ([^;]*)/.exec(csp)?.[1]?.split(' ');
    };
    expect(await formAction(bridgePath())).to.deep.equal(["'self'", VIEWER.origin]);
    // The policy follows the registration, not the request: a foreign redirect_uri adds nothing.
    expect(await formAction(bridgePath({ redirect_uri: 'https://evil.example/callback' }))).to.deep.equal(["'self'", VIEWER.origin]);
    expect(await formAction(bridgePath({ client_id: 'no-such-app', redirect_uri: 'https://evil.example/callback' }))).to.deep.equal(["'self'"]);
    // A re-registered callback moves the allowed origin with it.
    const fixture = await demoFixture();
    const apps = fixture['apps'] as Array<{ clientId: string; redirectUri: string }>;
    apps.find((a) => a.clientId === VIEWER.clientId)!.redirectUri = 'http://127.0.0.1:38480/callback';
    core.replaceFixture(fixture);
    try {
      expect(await formAction(bridgePath({ redirect_uri: 'http://127.0.0.1:38480/callback' }))).to.deep.equal(["'self'", 'http://127.0.0.1:38480']);
    } finally {
      core.replaceFixture(await demoFixture());
    }
  });

  it('refuses a sign-in sent by another site\'s page (login CSRF) and opens no session; core\'s own page and non-browser callers pass', async () => {
    const form = new URLSearchParams({ userId: 'u_alice', returnTo: bridgePath() }).toString();
    const post = (headers: Record<string, string>, body = form, type = 'application/x-www-form-urlencoded') =>
      fetch(`${core.url}/dev/session`, { method: 'POST', redirect: 'manual', headers: { 'content-type': type, ...headers }, body });
    const host = new URL(core.url).host;
    for (const headers of <Record<string, string>[]>[
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site', origin: VIEWER.origin },
      { origin: 'https://evil.example' },
      { origin: VIEWER.origin },
      { origin: 'null' },
    ]) {
      const answer = await post(headers);
      expect(answer.status, JSON.stringify(headers)).to.equal(403);
      expect(((await answer.json()) as { error: { code: string } }).error.code).to.equal('origin_not_allowed');
      expect(answer.headers.get('set-cookie'), JSON.stringify(headers)).to.equal(null);
      expect(answer.headers.get('location')).to.equal(null);
    }
    const json = await post({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, '{"userId":"u_alice"}', 'application/json');
    expect(json.status, 'the JSON form from a page').to.equal(403);
    expect((await post({ 'sec-fetch-site': 'same-origin', origin: `http://${host}` })).status, "core's own page").to.equal(303);
    expect((await post({ origin: `http://${host}` })).status, 'its own origin, without Fetch Metadata').to.equal(303);
    expect((await post({})).status, 'no browser page at all').to.equal(303);
  });

  it('signs in through the form and returns to the bridge, which then sends the browser to the callback', async () => {
    const path = bridgePath({ state: 'keep me' });
    const signedIn = await signInForm({ userId: 'u_alice', returnTo: path });
    expect(signedIn.status).to.equal(303);
    expect(signedIn.headers.get('location')).to.equal(path);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).to.match(/^core_session=/);
    const bridge = await navigate(path, cookie);
    expect(bridge.status).to.equal(303);
    const callback = new URL(bridge.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).to.equal(VIEWER.redirectUri);
    expect(callback.searchParams.get('state')).to.equal('keep me');
  });

  it('returns only to the bridge on core: any other place is refused without a redirect or a session', async () => {
    for (const returnTo of ['https://evil.example/', '//evil.example/oauth/authorize', '/dev/fixture', '/oauth/authorize/../../dev', `${VIEWER.redirectUri}?code=x`, '/oauth/authorize\\evil']) {
      const answer = await signInForm({ userId: 'u_alice', returnTo });
      expect(answer.status, returnTo).to.equal(400);
      expect(answer.headers.get('location')).to.equal(null);
      expect(answer.headers.get('set-cookie')).to.equal(null);
    }
  });

  it('shows other refusals as pages without the sign-in', async () => {
    const signedIn = await signInForm({ userId: 'u_alice', returnTo: bridgePath() });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const page = await navigate(bridgePath({ redirect_uri: 'https://evil.example/cb' }), cookie);
    expect(page.status).to.equal(400);
    expect(page.headers.get('location')).to.equal(null);
    const html = await page.text();
    expect(html).to.include('redirect_uri_mismatch');
    expect(html).to.not.include('/dev/session');
  });
});
