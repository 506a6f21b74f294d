import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { DEMO_FIXTURE_PATH, startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { pino } from 'pino';
import { authorizeScope } from './authorize-scope.ts';
import { createCoreClient, type CoreClient } from './core-client.ts';
import { createTokenVerifier } from './token-verifier.ts';
import type { VerifiedPrincipal } from './verified-principal.ts';

const SERVICE_TOKEN = 'authz-client-test-service-token';
const REPO = '01JGFJJZ00QNYBVPQTAT49MN0F';
const BRANCH = '01JGFJJZZ89S40WZVASPCBT80G';
const DELETED_BRANCH = '01JGFJK0YGB83273JNJF879N0A';
const ARCHIVED_REPO = '01JGFJK1XRGVD3BX64YJ5R47M7';
const FOREIGN_BRANCH = '01JGFJK2X0ENW0FH3C8BEWQVYR';

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('call succeeded');
}

describe('authorizeScope against dev-core', () => {
  let core: DevCoreHandle;
  let client: CoreClient;
  const demo = async () => JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8'));

  before(async () => {
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: pino({ level: 'silent' }) });
    client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 500 });
  });
  after(() => core.close());
  afterEach(async () => {
    core.replaceFixture(await demo());
  });

  /** A user as core's authorization is told of one: with its token's `jti` and `client_id`. */
  const user = (id: string) => ({ kind: 'user' as const, id, tokenId: `jti-${id}`, clientId: 'dev-core-demo-app', expiresAt: new Date(Date.now() + 60_000) });
  const bot = (id: string, credentialId: string) => ({ kind: 'bot' as const, id, credentialId, expiresAt: new Date(Date.now() + 60_000) });

  it('allows a writer and attributes the decision to the user', async () => {
    const result = await authorizeScope(client, user('u_alice'), { repositoryId: REPO, action: 'write' }, { requestId: 'req-1' });
    expect(result.scopeState).to.equal('active');
    expect(result.attribution).to.deep.equal({
      authorizationDecisionId: result.decisionId,
      authorizingSubjectId: 'u_alice',
      authorizingSubjectKind: 'user',
      botCredentialId: null,
      botGrantId: null,
    });
  });

  it('allows a bot and attributes the decision to its grant subject, credential and grant', async () => {
    const result = await authorizeScope(client, bot('b_ci', 'c_1'), { repositoryId: REPO, branchId: BRANCH, action: 'write' });
    expect(result.attribution).to.deep.include({
      authorizingSubjectId: 'o_acme',
      authorizingSubjectKind: 'organization',
      botCredentialId: 'c_1',
      botGrantId: 'g_1',
    });
  });

  it('reports sealed scopes: archived repository, deleted branch', async () => {
    expect((await authorizeScope(client, user('u_alice'), { repositoryId: ARCHIVED_REPO, action: 'read' })).scopeState).to.equal('sealed');
    expect((await authorizeScope(client, user('u_bob'), { repositoryId: REPO, branchId: DELETED_BRANCH, action: 'read' })).scopeState).to.equal('sealed');
  });

  const denials: [string, ReturnType<typeof user> | ReturnType<typeof bot>, { repositoryId: string; branchId?: string; action: 'read' | 'write' }][] = [
    ['reader writing', user('u_bob'), { repositoryId: REPO, action: 'write' }],
    ['non-member reading', user('u_carol'), { repositoryId: REPO, action: 'read' }],
    ['unknown repository', user('u_alice'), { repositoryId: '01JGFJK3W8GE2RMDX78EQVVVR6', action: 'read' }],
    ['branch of another repository', user('u_alice'), { repositoryId: REPO, branchId: FOREIGN_BRANCH, action: 'read' }],
    ['read-only bot appending', bot('b_reader', 'c_reader'), { repositoryId: REPO, action: 'write' }],
    ['bot outside its grant', bot('b_ci', 'c_1'), { repositoryId: ARCHIVED_REPO, action: 'read' }],
  ];
  for (const [name, principal, scope] of denials) {
    it(`throws AUTHORIZATION_DENIED: ${name}`, async () => {
      const err = await failure(authorizeScope(client, principal, scope));
      expect(err.code).to.equal('AUTHORIZATION_DENIED');
      expect(err.status).to.equal(403);
    });
  }

  it('throws TOKEN_REJECTED for a validly signed token of a revoked bot credential', async () => {
    const verifier = createTokenVerifier({ coreUrl: core.url });
    const token = await core.mintToken({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_2' });
    const principal = await verifier.verify(`Bearer ${token}`);
    const err = await failure(authorizeScope(client, principal, { repositoryId: REPO, action: 'read' }));
    expect(err.code).to.equal('TOKEN_REJECTED');
    expect(err.status).to.equal(401);
  });

  it('names the token to core, so a revoked human token or an uninstalled app is TOKEN_REJECTED at its next authorization, cached verification or not', async () => {
    const verifier = createTokenVerifier({ coreUrl: core.url });
    const revoke = (body: unknown) => fetch(`${core.url}/dev/revocations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const [leaked, kept] = await Promise.all([0, 1].map(() => core.mintToken({ type: 'human', subjectId: 'u_alice' })));
    const appToken = await core.mintToken({ type: 'human', subjectId: 'u_alice', clientId: `app-${Date.now()}` });
    const principals = await Promise.all([leaked, kept, appToken].map((t) => verifier.verify(`Bearer ${t}`)));
    for (const principal of principals) expect((await authorizeScope(client, principal, { repositoryId: REPO, action: 'read' })).scopeState).to.equal('active');
    const [leakedPrincipal, , appPrincipal] = principals as [VerifiedPrincipal, VerifiedPrincipal, VerifiedPrincipal];
    if (leakedPrincipal.kind !== 'user' || appPrincipal.kind !== 'user') throw new Error('human tokens verify as users');
    expect((await revoke({ jti: leakedPrincipal.tokenId })).status).to.equal(200);
    expect((await revoke({ clientId: appPrincipal.clientId, subjectId: 'u_alice' })).status).to.equal(200);
    for (const token of [leaked, appToken]) {
      const principal = await verifier.verify(`Bearer ${token}`);
      expect(principals).to.include(principal); // the verified-token cache answered
      const err = await failure(authorizeScope(client, principal, { repositoryId: REPO, action: 'read' }));
      expect(err.code).to.equal('TOKEN_REJECTED');
      expect(err.status).to.equal(401);
    }
    expect((await authorizeScope(client, await verifier.verify(`Bearer ${kept}`), { repositoryId: REPO, action: 'read' })).scopeState).to.equal('active');
  });

  it('sees fixture changes at once: revoked grant, revoked credential, new member', async () => {
    const fixture = await demo();
    fixture.bots[0].grants[0].state = 'revoked';
    fixture.bots[1].credentials[0].state = 'revoked';
    fixture.repositories[0].members.u_carol = 'read';
    core.replaceFixture(fixture);
    expect((await failure(authorizeScope(client, bot('b_ci', 'c_1'), { repositoryId: REPO, action: 'read' }))).code).to.equal('AUTHORIZATION_DENIED');
    expect((await failure(authorizeScope(client, bot('b_reader', 'c_reader'), { repositoryId: REPO, action: 'read' }))).code).to.equal('TOKEN_REJECTED');
    expect((await authorizeScope(client, user('u_carol'), { repositoryId: REPO, action: 'read' })).scopeState).to.equal('active');
  });
});
