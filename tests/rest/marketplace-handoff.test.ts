import { expect } from 'chai';
import { ulid } from 'ulid';
import type { RoomScope } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { pkcePair, type FixtureApp, type FixtureInstallation } from '../harness/dev-core-client.ts';
import { sharedStack, type Stack } from '../harness/stacks.ts';
import type { Scenario } from '../harness/fixture-factory.ts';

/** The claims of a compact JWS, unverified: chat's acceptance is what verifies it here. */
function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/**
 * Spec section 5, "Marketplace OAuth handoff": a human signed in to core sends an app through core's
 * bridge, the app exchanges the code with its PKCE verifier, and chat accepts the token it gets.
 */
describe('section 5 marketplace OAuth handoff (core origin) into chat', function () {
  this.timeout(60_000);
  let stack: Stack;
  before(async () => {
    stack = await sharedStack('embedded');
  });

  /** A fresh scenario with a fresh app installed for its writer (chat scope) and uninstalled for its reader. */
  async function setup(): Promise<{ scenario: Scenario; app: FixtureApp; scope: RoomScope }> {
    const { scenario } = await stack.scenario();
    const s = ulid().toLowerCase();
    const app: FixtureApp = { clientId: `viewer-${s}`, redirectUri: `http://127.0.0.1:8080/callback?app=${s}`, scopes: ['chat', 'core:commits:read'] };
    const installations: FixtureInstallation[] = [
      { clientId: app.clientId, userId: scenario.users.writer, scopes: ['chat', 'core:commits:read'], state: 'active' },
      { clientId: app.clientId, userId: scenario.users.reader, scopes: ['chat'], state: 'uninstalled' },
    ];
    const fixture = (await stack.core.getFixture()) as { apps?: FixtureApp[]; installations?: FixtureInstallation[] };
    await stack.core.putFixture({ ...fixture, apps: [...(fixture.apps ?? []), app], installations: [...(fixture.installations ?? []), ...installations] });
    return { scenario, app, scope: { repositoryId: scenario.repositoryId } };
  }

  /** The browser leg: signed in as `userId`, through the bridge, to the callback; returns what the app receives. */
  async function authorize(app: FixtureApp, userId: string, challenge: string, state: string, scope = 'chat') {
    const answer = await stack.core.openAuthorizeBridge(
      { response_type: 'code', client_id: app.clientId, redirect_uri: app.redirectUri, scope, state, code_challenge: challenge, code_challenge_method: 'S256' },
      await stack.core.signIn(userId),
    );
    return answer;
  }

  it('a code exchanged with its verifier gives a token chat accepts for reading and appending', async () => {
    const { scenario, app, scope } = await setup();
    const { verifier, challenge } = pkcePair();
    const state = `state ${ulid()} &=?`;
    const bridge = await authorize(app, scenario.users.writer, challenge, state);
    expect(bridge.status).to.equal(303);
    expect(bridge.headers.get('cache-control')).to.equal('no-store');
    const callback = new URL(bridge.headers.get('location')!);
    expect(callback.searchParams.get('state')).to.equal(state);
    const code = callback.searchParams.get('code')!;
    callback.searchParams.delete('code');
    callback.searchParams.delete('state');
    expect(callback.toString()).to.equal(app.redirectUri);

    const token = await stack.core.exchangeCode({ grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier });
    expect(token.status).to.equal(200);
    expect(token.headers.get('cache-control')).to.equal('no-store');
    expect(claimsOf(token.body.access_token)).to.include({ sub: scenario.users.writer, client_id: app.clientId, aud: 'chat', scope: 'chat' });

    expectStatus(await stack.api.getRoom(scope, token.body.access_token), 200);
    expectStatus(await stack.api.list(scope, token.body.access_token), 200);
    expectStatus(await stack.api.append(scope, token.body.access_token, { bodyMarkdown: 'signed in through the handoff' }), 201);
  });

  it('a replayed code gets no token and the token it gave is rejected by chat; uninstalling the app rejects the next one', async () => {
    const { scenario, app, scope } = await setup();
    const exchange = async () => {
      const { verifier, challenge } = pkcePair();
      const code = new URL((await authorize(app, scenario.users.writer, challenge, 's')).headers.get('location')!).searchParams.get('code')!;
      const body = { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier };
      return { body, first: await stack.core.exchangeCode(body) };
    };
    const { body, first } = await exchange();
    expectStatus(await stack.api.getRoom(scope, first.body.access_token), 200);
    const replay = await stack.core.exchangeCode(body);
    expect(replay.status).to.equal(400);
    expect(replay.body.error.code).to.equal('invalid_grant');
    expectError(await stack.api.getRoom(scope, first.body.access_token), 401, 'TOKEN_REJECTED');

    const { first: second } = await exchange();
    expectStatus(await stack.api.getRoom(scope, second.body.access_token), 200);
    await stack.core.revoke({ clientId: app.clientId, subjectId: scenario.users.writer });
    expectError(await stack.api.getRoom(scope, second.body.access_token), 401, 'TOKEN_REJECTED');
  });

  it('a grant of core scopes alone yields no chat access: its token is refused by chat with 401 for reading and appending', async () => {
    const { scenario, app, scope } = await setup();
    const { verifier, challenge } = pkcePair();
    const bridge = await authorize(app, scenario.users.writer, challenge, 's', 'core:commits:read');
    const code = new URL(bridge.headers.get('location')!).searchParams.get('code')!;
    const token = await stack.core.exchangeCode({ grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, client_id: app.clientId, code_verifier: verifier });
    expect(token.status).to.equal(200);
    expect(token.body.scope).to.equal('core:commits:read');
    const accessToken = token.body.access_token as string;
    expect(claimsOf(accessToken)).to.include({ sub: scenario.users.writer, aud: 'core', scope: 'core:commits:read' });

    expectError(await stack.api.getRoom(scope, accessToken), 401, 'TOKEN_REJECTED');
    expectError(await stack.api.list(scope, accessToken), 401, 'TOKEN_REJECTED');
    expectError(await stack.api.append(scope, accessToken, { bodyMarkdown: 'no chat scope' }), 401, 'TOKEN_REJECTED');
    expect(token.body.core_access_token, "the only token is core's resource token").to.equal(accessToken);
  });

  it("the demo fixture's viewer app outlives the scenarios tests add to the shared dev-core", async () => {
    await stack.scenario();
    const fixture = (await stack.core.getFixture()) as { apps?: FixtureApp[]; installations?: FixtureInstallation[] };
    expect(fixture.apps?.map((a) => a.clientId)).to.include('chat-viewer');
    expect(fixture.installations?.filter((i) => i.clientId === 'chat-viewer').map((i) => i.userId)).to.include.members(['u_alice', 'u_bob']);
  });

    it('an uninstalled installation gets no code and no redirect', async () => {
    const { scenario, app } = await setup();
    const answer = await authorize(app, scenario.users.reader, pkcePair().challenge, 's');
    expect(answer.status).to.equal(403);
    expect(answer.headers.get('location')).to.equal(null);
    expect(answer.body.error.code).to.equal('installation_inactive');
  });
});
