import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { DEMO_FIXTURE_PATH, startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { pino } from 'pino';
import { createCoreClient, type CoreClient } from './core-client.ts';
import { decidePrincipalAccess, listReadableRepositories } from './principal-access.ts';
import { createTokenVerifier, type TokenVerifier } from './token-verifier.ts';

const SERVICE_TOKEN = 'authz-client-test-service-token';
const REPO = '01JGFJJZ00QNYBVPQTAT49MN0F';
const ARCHIVED_REPO = '01JGFJK1XRGVD3BX64YJ5R47M7';

/** A canonical ULID for test repository `n`. */
const repositoryId = (n: number) => `01JH${String(n).padStart(22, '0')}`;

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('call succeeded');
}

describe('decidePrincipalAccess against dev-core', () => {
  let core: DevCoreHandle;
  let deps: { tokens: TokenVerifier; core: CoreClient };
  const demo = async () => JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8'));
  const request = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, requestId: 'req-feed' });
  const human = (subjectId: string, clientId?: string) => core.mintToken({ type: 'human', subjectId, ...(clientId === undefined ? {} : { clientId }) });
  const botToken = (subjectId: string, credentialId: string) => core.mintToken({ type: 'bot', subjectId, credentialId });
  const discoveryCalls = async () => ((await (await fetch(`${core.url}/dev/calls`)).json()) as { listRepositories: number }).listRepositories;

  before(async () => {
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: pino({ level: 'silent' }) });
    deps = { tokens: createTokenVerifier({ coreUrl: core.url }), core: createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 500 }) };
  });
  after(() => core.close());
  afterEach(async () => {
    core.setFaults({ authorization: 'ok' });
    core.replaceFixture(await demo());
  });

  it("gives a user's principal and the repositories it may read, archived ones included", async () => {
    const access = await decidePrincipalAccess(deps, request(await human('u_alice')));
    expect(access.principal).to.include({ kind: 'user', id: 'u_alice' });
    expect([...access.readable]).to.deep.equal([REPO, ARCHIVED_REPO]);
    expect([...(await decidePrincipalAccess(deps, request(await human('u_carol')))).readable]).to.deep.equal([]);
  });

  it("gives a bot the repositories of its active room:read grants, each once", async () => {
    const fixture = await demo();
    fixture.bots[0].grants.push({ id: 'g_again', repositoryId: REPO, subject: { kind: 'user', id: 'u_alice' }, capabilities: ['room:read'], state: 'active' });
    core.replaceFixture(fixture);
    const access = await decidePrincipalAccess(deps, request(await botToken('b_ci', 'c_1')));
    expect(access.principal).to.include({ kind: 'bot', id: 'b_ci', credentialId: 'c_1' });
    expect([...access.readable]).to.deep.equal([REPO]);
  });

  it('refuses a missing or bad bearer token without asking core', async () => {
    const before = await discoveryCalls();
    expect((await failure(decidePrincipalAccess(deps, request('not.a.jwt')))).code).to.equal('TOKEN_REJECTED');
    expect((await failure(decidePrincipalAccess(deps, { headers: {}, requestId: 'r' }))).code).to.equal('AUTHENTICATION_REQUIRED');
    expect(await discoveryCalls()).to.equal(before);
  });

  it('answers TOKEN_REJECTED for a revoked token, an uninstalled app or a revoked credential, at the next call', async () => {
    const revoke = (body: unknown) => fetch(`${core.url}/dev/revocations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const [leaked, kept] = await Promise.all([human('u_alice'), human('u_alice')]);
    const appToken = await human('u_alice', `discovery-app-${Date.now()}`);
    const bot = await botToken('b_reader', 'c_reader');
    const principals = await Promise.all([leaked, appToken, bot].map((t) => decidePrincipalAccess(deps, request(t))));
    for (const { readable } of principals) expect(readable.has(REPO)).to.equal(true);
    const [leakedPrincipal, appPrincipal] = principals.map((p) => p.principal);
    if (leakedPrincipal?.kind !== 'user' || appPrincipal?.kind !== 'user') throw new Error('human tokens verify as users');
    await revoke({ jti: leakedPrincipal.tokenId });
    await revoke({ clientId: appPrincipal.clientId, subjectId: 'u_alice' });
    const fixture = await demo();
    fixture.bots[1].credentials[0].state = 'revoked';
    core.replaceFixture(fixture);
    for (const token of [leaked, appToken, bot]) {
      const err = await failure(decidePrincipalAccess(deps, request(token)));
      expect(err.code).to.equal('TOKEN_REJECTED');
      expect(err.status).to.equal(401);
    }
    expect((await decidePrincipalAccess(deps, request(kept))).readable.size).to.equal(2);
  });

  it('follows a revoked grant at the next recheck, the other repositories kept', async () => {
    const fixture = await demo();
    fixture.repositories.push({ id: repositoryId(1), state: 'active', members: {} });
    fixture.bots[0].grants.push({ id: 'g_other', repositoryId: repositoryId(1), subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['room:read'], state: 'active' });
    core.replaceFixture(fixture);
    const { principal, readable } = await decidePrincipalAccess(deps, request(await botToken('b_ci', 'c_1')));
    expect([...readable]).to.deep.equal([REPO, repositoryId(1)]);
    fixture.bots[0].grants[0].state = 'revoked';
    core.replaceFixture(fixture);
    expect([...(await listReadableRepositories(deps.core, principal))]).to.deep.equal([repositoryId(1)]);
  });

  it('fails closed with AUTHORIZATION_UNAVAILABLE when core is unavailable or too slow', async () => {
    const principal = (await decidePrincipalAccess(deps, request(await human('u_bob')))).principal;
    core.setFaults({ authorization: 'unavailable' });
    const err = await failure(listReadableRepositories(deps.core, principal));
    expect(err.code).to.equal('AUTHORIZATION_UNAVAILABLE');
    expect(err.status).to.equal(503);
    core.setFaults({ authorization: 'slow', latencyMs: 5000 });
    expect((await failure(decidePrincipalAccess(deps, request(await human('u_bob'))))).code).to.equal('AUTHORIZATION_UNAVAILABLE');
  });

  it('reads 1,000 repositories from one answer', async () => {
    const fixture = await demo();
    const ids = Array.from({ length: 1000 }, (_, i) => repositoryId(i + 1));
    fixture.repositories.push(...ids.map((id) => ({ id, state: 'active', members: {} })));
    fixture.bots[1].grants.push(...ids.map((id, i) => ({ id: `g_${i}`, repositoryId: id, subject: { kind: 'user', id: 'u_alice' }, capabilities: ['room:read'], state: 'active' })));
    core.replaceFixture(fixture);
    const { readable } = await decidePrincipalAccess(deps, request(await botToken('b_reader', 'c_reader')));
    expect(readable.size).to.equal(1001);
    for (const id of [REPO, ...ids]) expect(readable.has(id), id).to.equal(true);
  });
});

describe('listRepositories against a core answering out of contract', () => {
  let server: Server;
  let url: string;
  let respond: RequestListener;
  let seen: { path?: string; requestId?: string; body?: unknown } = {};

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen = { path: req.url!, requestId: req.headers['x-request-id'] as string | undefined, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
        respond(req, res);
      });
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const client = () => createCoreClient({ coreUrl: url, serviceToken: 'svc-token', timeoutMs: 1000 });
  const json = (status: number, body: unknown): RequestListener => (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const principal = { kind: 'bot' as const, id: 'b_ci', credentialId: 'c_1', tokenId: 'jti-1', expiresAt: new Date() };

  it('asks with the principal as authorize names it, action read and the request ID', async () => {
    respond = json(200, { decision: 'allow', repositories: [{ repositoryId: REPO, scopeState: 'sealed', name: 'extra fields are dropped' }] });
    expect([...(await listReadableRepositories(client(), principal, { requestId: 'req-7' }))]).to.deep.equal([REPO]);
    expect(seen).to.deep.equal({
      path: '/internal/v1/principals/repositories',
      requestId: 'req-7',
      body: { principal: { kind: 'bot', id: 'b_ci', credentialId: 'c_1', tokenId: 'jti-1' }, action: 'read' },
    });
  });

  it('takes an answer of 10,000 repositories, past the limit of the other calls', async () => {
    const repositories = Array.from({ length: 10_000 }, (_, i) => ({ repositoryId: repositoryId(i), scopeState: 'active', name: `org/${'r'.repeat(100)}-${i}` }));
    respond = json(200, { decision: 'allow', repositories });
    expect(JSON.stringify({ repositories }).length).to.be.above(1024 * 1024);
    expect((await listReadableRepositories(client(), principal)).size).to.equal(10_000);
  });

  for (const [name, handler] of [
    ['a 500', json(500, { error: 'boom' })],
    ['a deny (core has no such answer here)', json(200, { decision: 'deny' })],
    ['an allow without repositories', json(200, { decision: 'allow' })],
    ['an unknown scope state', json(200, { decision: 'allow', repositories: [{ repositoryId: REPO, scopeState: 'frozen' }] })],
    ['an entry without its ID', json(200, { decision: 'allow', repositories: [{ scopeState: 'active' }] })],
    ['a body past the limit', (_req, res) => res.writeHead(200).end(`{"pad":"${'x'.repeat(9 * 1024 * 1024)}"}`)],
  ] as [string, RequestListener][]) {
    it(`→ AUTHORIZATION_UNAVAILABLE on ${name}`, async () => {
      respond = handler;
      expect((await failure(listReadableRepositories(client(), principal))).code).to.equal('AUTHORIZATION_UNAVAILABLE');
    });
  }
});
