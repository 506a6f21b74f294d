import { expect } from 'chai';
import { DEMO_FIXTURE_PATH, FixtureStore, loadFixtureFile } from './fixture-store.ts';
import { AUTHORIZATION_CODE_TTL_MS, MarketplaceOAuth, OAuthRequestError } from './marketplace-oauth.ts';
import { generateIssuerKeys } from './signing-keys.ts';

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const viewerRequest = (n: number) => ({
  client_id: 'chat-viewer',
  redirect_uri: 'http://127.0.0.1:8080/callback',
  state: `s${n}`,
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
});

function refusal(run: () => unknown): OAuthRequestError {
  try {
    run();
  } catch (err) {
    if (err instanceof OAuthRequestError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('MarketplaceOAuth authorization codes', () => {
  let now = 0;
  let oauth: MarketplaceOAuth;
  beforeEach(async () => {
    now = 1_000_000;
    const store = new FixtureStore(await loadFixtureFile(DEMO_FIXTURE_PATH));
    oauth = new MarketplaceOAuth({ store, keys: await generateIssuerKeys(), publicUrl: () => 'http://127.0.0.1:1', now: () => now, maxCodes: 3 });
  });

  it('holds at most maxCodes codes, refusing more with 503 temporarily_unavailable until some expire', () => {
    for (let i = 0; i < 3; i++) oauth.authorize('u_alice', viewerRequest(i));
    const refused = refusal(() => oauth.authorize('u_bob', viewerRequest(3)));
    expect(refused).to.include({ status: 503, code: 'temporarily_unavailable' });
    expect(oauth.outstandingCodes).to.equal(3);

    now += AUTHORIZATION_CODE_TTL_MS;
    expect(oauth.authorize('u_bob', viewerRequest(4)).code).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(oauth.outstandingCodes, 'the expired codes are swept').to.equal(1);
  });

  it('sweeps expired codes, keeping the live ones in issue order', () => {
    oauth.authorize('u_alice', viewerRequest(0));
    now += AUTHORIZATION_CODE_TTL_MS / 2;
    oauth.authorize('u_alice', viewerRequest(1));
    now += AUTHORIZATION_CODE_TTL_MS / 2;
    oauth.authorize('u_alice', viewerRequest(2));
    expect(oauth.outstandingCodes).to.equal(2);
  });
});
