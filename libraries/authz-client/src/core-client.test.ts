import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { DEMO_FIXTURE_PATH, startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { pino } from 'pino';
import { authorizeScope } from './authorize-scope.ts';
import { createCoreClient, type CoreClient } from './core-client.ts';
import { createCoreTransport, type CoreTransport } from './core-transport.ts';
import { parseCoreResourceHeader } from './bearer-header.ts';

const SERVICE_TOKEN = 'authz-client-test-service-token';
const REPO = '01JGFJJZ00QNYBVPQTAT49MN0F';
const BRANCH = '01JGFJJZZ89S40WZVASPCBT80G';
const DELETED_BRANCH = '01JGFJK0YGB83273JNJF879N0A';

/** A user as core's authorization is told of one: with its token's `jti` and `client_id`. */
const userPrincipal = (id: string) => ({ kind: 'user' as const, id, tokenId: `jti-${id}`, clientId: 'dev-core-demo-app' });

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('call succeeded');
}

async function listen(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('createCoreClient against dev-core', () => {
  let core: DevCoreHandle;
  let client: CoreClient;
  const demo = async () => JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8'));

  before(async () => {
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: pino({ level: 'silent' }) });
    client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 500 });
  });
  after(() => core.close());
  afterEach(async () => {
    core.setFaults({ authorization: 'ok' });
    core.replaceFixture(await demo());
  });

  describe('faults', () => {
    it('unavailable → AUTHORIZATION_UNAVAILABLE (503)', async () => {
      core.setFaults({ authorization: 'unavailable' });
      const err = await failure(client.authorize({ principal: userPrincipal('u_alice'), repositoryId: REPO, action: 'read' }));
      expect(err.code).to.equal('AUTHORIZATION_UNAVAILABLE');
      expect(err.status).to.equal(503);
      expect((await failure(client.resolveMentions({ repositoryId: REPO, targets: [] }))).code).to.equal('AUTHORIZATION_UNAVAILABLE');
    });

    it('slow → AUTHORIZATION_UNAVAILABLE within the client timeout', async () => {
      core.setFaults({ authorization: 'slow', latencyMs: 5000 });
      const started = Date.now();
      const err = await failure(client.authorize({ principal: userPrincipal('u_alice'), repositoryId: REPO, action: 'read' }));
      expect(err.code).to.equal('AUTHORIZATION_UNAVAILABLE');
      expect(Date.now() - started).to.be.within(450, 1500);
    });

    it('a wrong service token → AUTHORIZATION_UNAVAILABLE, never a client-facing 401', async () => {
      const misconfigured = createCoreClient({ coreUrl: core.url, serviceToken: 'wrong-token' });
      const input = { principal: userPrincipal('u_alice'), repositoryId: REPO, action: 'read' as const };
      expect((await failure(misconfigured.authorize(input))).code).to.equal('AUTHORIZATION_UNAVAILABLE');
      expect((await failure(misconfigured.resolveMentions({ repositoryId: REPO, targets: [] }))).code).to.equal('AUTHORIZATION_UNAVAILABLE');
    });
  });

  describe('resolveMentions', () => {
    const targets = [
      { kind: 'human' as const, id: 'u_bob' },
      { kind: 'human' as const, id: 'u_carol' },
      { kind: 'bot' as const, id: 'b_reader' },
    ];

    const alice = { kind: 'user' as const, id: 'u_alice' };

    it('resolves with the author’s core resource token', async () => {
      const coreResourceToken = await core.mintToken({ type: 'core_resource', subjectId: 'u_alice' });
      const { targets: resolved } = await client.resolveMentions({ repositoryId: REPO, branchId: BRANCH, targets, author: alice, coreResourceToken });
      expect(resolved.map((t) => t.valid)).to.deep.equal([true, false, true]);
    });

    it('throws CORE_RESOURCE_TOKEN_REJECTED for a valid token of someone other than the author', async () => {
      const bobs = await core.mintToken({ type: 'core_resource', subjectId: 'u_bob' });
      const err = await failure(client.resolveMentions({ repositoryId: REPO, targets, author: alice, coreResourceToken: bobs }));
      expect(err.code).to.equal('CORE_RESOURCE_TOKEN_REJECTED');
      const own = await client.resolveMentions({ repositoryId: REPO, targets, author: { kind: 'user', id: 'u_bob' }, coreResourceToken: bobs });
      expect(own.targets).to.have.length(3);
    });

    it('throws CORE_RESOURCE_TOKEN_REJECTED for a token core refuses', async () => {
      for (const coreResourceToken of [
        await core.mintToken({ type: 'human', subjectId: 'u_alice' }),
        await core.mintToken({ type: 'core_resource', subjectId: 'u_alice', expiresInSeconds: -60 }),
      ]) {
        const err = await failure(client.resolveMentions({ repositoryId: REPO, targets, author: alice, coreResourceToken }));
        expect(err.code).to.equal('CORE_RESOURCE_TOKEN_REJECTED');
        expect(err.message).to.not.contain(coreResourceToken);
      }
    });

    it('parseCoreResourceHeader reads bearer-form values only', () => {
      expect(parseCoreResourceHeader(undefined)).to.equal(undefined);
      expect(parseCoreResourceHeader('Bearer a.b.c')).to.equal('a.b.c');
      for (const bad of ['a.b.c', 'Basic dTpw', 'Bearer a.b.c.d.e', `Bearer ${'a'.repeat(9000)}.b.c`]) {
        expect(() => parseCoreResourceHeader(bad)).to.throw(AppError).with.property('code', 'CORE_RESOURCE_TOKEN_REJECTED');
      }
    });
  });
});

describe('createCoreClient: concurrent authorizations share core calls (against dev-core)', () => {
  let core: DevCoreHandle;
  const demo = async () => JSON.parse(await readFile(DEMO_FIXTURE_PATH, 'utf8'));
  before(async () => {
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, logger: pino({ level: 'silent' }) });
  });
  after(() => core.close());
  afterEach(async () => {
    core.setFaults({ authorization: 'ok' });
    core.replaceFixture(await demo());
  });

  /** The real transport, counting the calls it makes by path. */
  function countingTransport(): { transport: CoreTransport; calls: Map<string, number> } {
    const real = createCoreTransport();
    const calls = new Map<string, number>();
    return {
      calls,
      transport: {
        send(url, init) {
          calls.set(url.pathname, (calls.get(url.pathname) ?? 0) + 1);
          return real.send(url, init);
        },
        close: () => real.close(),
      },
    };
  }

  const cases = [
    { input: { principal: userPrincipal('u_alice'), repositoryId: REPO, action: 'write' as const }, expected: 'allow/active' },
    { input: { principal: userPrincipal('u_bob'), repositoryId: REPO, action: 'write' as const }, expected: 'deny/active' },
    { input: { principal: userPrincipal('u_carol'), repositoryId: REPO, action: 'read' as const }, expected: 'deny/active' },
    { input: { principal: { kind: 'bot' as const, id: 'b_ci', credentialId: 'c_1' }, repositoryId: REPO, action: 'write' as const }, expected: 'allow/active' },
    { input: { principal: { kind: 'bot' as const, id: 'b_ci', credentialId: 'c_2' }, repositoryId: REPO, action: 'read' as const }, expected: 'principal_invalid/active' },
    { input: { principal: userPrincipal('u_alice'), repositoryId: REPO, branchId: DELETED_BRANCH, action: 'write' as const }, expected: 'allow/sealed' },
  ];

  it('answers 60 concurrent authorizations, each with its own decision, in far fewer HTTP calls', async () => {
    const { transport, calls } = countingTransport();
    const client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, transport });
    const asked = Array.from({ length: 60 }, (_, i) => cases[i % cases.length]!);
    const decisions = await Promise.all(asked.map((c, i) => client.authorize(c.input, { requestId: `req-${i}` })));
    expect(decisions.map((d) => `${d.decision}/${d.scopeState}`)).to.deep.equal(asked.map((c) => c.expected));
    expect(decisions[3]).to.deep.include({ botCredentialId: 'c_1', botGrantId: 'g_1' });
    expect(new Set(decisions.map((d) => d.decisionId)).size).to.equal(60);
    const single = calls.get('/internal/v1/authorize') ?? 0;
    const batched = calls.get('/internal/v1/authorize/batch') ?? 0;
    expect(batched, 'batch calls').to.be.at.least(1);
    expect(single + batched, 'HTTP calls for 60 authorizations').to.be.at.most(10);
    await transport.close();
  });

  it('sends a lone authorization to the single endpoint', async () => {
    const { transport, calls } = countingTransport();
    const client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, transport });
    const decision = await client.authorize(cases[0]!.input);
    expect(decision.decision).to.equal('allow');
    expect([...calls]).to.deep.equal([['/internal/v1/authorize', 1]]);
    await transport.close();
  });

  it('fails every authorization of a call core cannot answer, and the next ones recover', async () => {
    const client = createCoreClient({ coreUrl: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 1000 });
    core.setFaults({ authorization: 'unavailable' });
    const failed = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => client.authorize(cases[i % cases.length]!.input)));
    for (const outcome of failed) {
      expect(outcome.status).to.equal('rejected');
      expect(((outcome as PromiseRejectedResult).reason as AppError).code).to.equal('AUTHORIZATION_UNAVAILABLE');
    }
    core.setFaults({ authorization: 'ok' });
    const recovered = await Promise.all(Array.from({ length: 20 }, (_, i) => client.authorize(cases[i % cases.length]!.input)));
    expect(recovered.map((d) => `${d.decision}/${d.scopeState}`)).to.deep.equal(Array.from({ length: 20 }, (_, i) => cases[i % cases.length]!.expected));
  });
});

describe('createCoreClient against a core answering garbage', () => {
  let server: Server;
  let url: string;
  let respond: RequestListener;
  let seen: { authorization?: string; requestId?: string; resource?: string } = {};

  before(async () => {
    ({ server, url } = await listen((req, res) => {
      seen = {
        authorization: req.headers.authorization,
        requestId: req.headers['x-request-id'] as string | undefined,
        resource: req.headers['x-core-resource-authorization'] as string | undefined,
      };
      respond(req, res);
    }));
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const client = () => createCoreClient({ coreUrl: url, serviceToken: 'svc-token', timeoutMs: 300 });
  const authorizeInput = { principal: userPrincipal('u_alice'), repositoryId: REPO, action: 'read' as const };
  const json = (status: number, body: unknown): RequestListener => (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const garbage: [string, RequestListener][] = [
    ['a 500', json(500, { error: 'boom' })],
    ['a 502 with HTML', (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>')],
    ['a 200 that is not JSON', (_req, res) => res.writeHead(200).end('allow')],
    ['a 200 with an empty body', (_req, res) => res.writeHead(200).end()],
    ['an unknown decision', json(200, { decision: 'maybe', decisionId: 'd1', scopeState: 'active' })],
    ['a missing decisionId', json(200, { decision: 'allow', scopeState: 'active' })],
    ['an unknown scope state', json(200, { decision: 'allow', decisionId: 'd1', scopeState: 'frozen' })],
    ['a JSON array', json(200, [{ decision: 'allow' }])],
    ['a redirect', (_req, res) => res.writeHead(307, { location: 'http://127.0.0.1:1/' }).end()],
    ['a 401 to chat’s service token', json(401, { error: { code: 'service_unauthenticated' } })],
    ['a 400', json(400, { error: { code: 'request_invalid' } })],
    ['a reset connection', (req) => req.socket.destroy()],
    ['headers but a body that never ends', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"decision":');
    }],
    ['nothing at all (hang)', () => undefined],
    ['a huge body', (_req, res) => res.writeHead(200).end(`{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`)],
  ];
  it('fails only the callers whose decision in a batch answer is invalid, and all of them when decisions are missing', async () => {
    const allow = { decision: 'allow', decisionId: 'd-ok', scopeState: 'active' };
    // One call at a time: the first authorization goes alone, the next two share the batch call.
    const serial = createCoreClient({ coreUrl: url, serviceToken: 'svc-token', timeoutMs: 300, authorizeConcurrency: 1 });
    const batchAnswer = (decisions: unknown[]): RequestListener => (req, res) =>
      json(200, req.url === '/internal/v1/authorize/batch' ? { decisions } : allow)(req, res);

    respond = batchAnswer([allow, { decision: 'maybe' }]);
    const [alone, first, second] = await Promise.allSettled([0, 1, 2].map(() => serial.authorize(authorizeInput)));
    expect(alone?.status).to.equal('fulfilled');
    expect(first?.status).to.equal('fulfilled');
    expect(((second as PromiseRejectedResult).reason as AppError).code).to.equal('AUTHORIZATION_UNAVAILABLE');

    respond = batchAnswer([allow]);
    const short = await Promise.allSettled([0, 1, 2].map(() => serial.authorize(authorizeInput)));
    expect(short.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected']);
  });

  for (const [name, handler] of garbage) {
    it(`authorize → AUTHORIZATION_UNAVAILABLE on ${name}`, async () => {
      respond = handler;
      const started = Date.now();
      const err = await failure(client().authorize(authorizeInput));
      expect(err.code).to.equal('AUTHORIZATION_UNAVAILABLE');
      expect(Date.now() - started).to.be.below(1500);
      expect(err.message).to.not.contain('svc-token');
    });
  }

  it('authorizeScope → AUTHORIZATION_UNAVAILABLE when a bot is allowed without attribution', async () => {
    respond = json(200, { decision: 'allow', decisionId: 'd1', scopeState: 'active' });
    const principal = { kind: 'bot' as const, id: 'b_ci', credentialId: 'c_1', expiresAt: new Date() };
    expect((await failure(authorizeScope(client(), principal, { repositoryId: REPO, action: 'read' }))).code).to.equal('AUTHORIZATION_UNAVAILABLE');
  });

  it('sends the service token, the request ID and the resource token in headers', async () => {
    respond = json(200, { targets: [{ kind: 'human', id: 'u_bob', valid: true }], extra: 'ignored' });
    const result = await client().resolveMentions(
      { repositoryId: REPO, targets: [{ kind: 'human', id: 'u_bob' }], author: { kind: 'user', id: 'u_alice' }, coreResourceToken: 'a.b.c' },
      { requestId: 'req-42' },
    );
    expect(result).to.deep.equal({ targets: [{ kind: 'human', id: 'u_bob', valid: true }] });
    expect(seen).to.deep.equal({ authorization: 'Bearer svc-token', requestId: 'req-42', resource: 'Bearer a.b.c' });
  });

  it('resolveMentions → CORE_RESOURCE_TOKEN_REJECTED on a plain 401', async () => {
    respond = json(401, { error: { code: 'resource_token_rejected' } });
    expect((await failure(client().resolveMentions({ repositoryId: REPO, targets: [] }))).code).to.equal('CORE_RESOURCE_TOKEN_REJECTED');
    respond = (_req, res) => res.writeHead(401).end('nope');
    expect((await failure(client().resolveMentions({ repositoryId: REPO, targets: [] }))).code).to.equal('CORE_RESOURCE_TOKEN_REJECTED');
  });

  for (const [name, body] of [
    ['targets left unanswered', { targets: [] }],
    ['a target without validity', { targets: [{ kind: 'human', id: 'u_bob' }] }],
    ['no targets field', { resolved: true }],
  ] as const) {
    it(`resolveMentions → AUTHORIZATION_UNAVAILABLE on ${name}`, async () => {
      respond = json(200, body);
      const err = await failure(client().resolveMentions({ repositoryId: REPO, targets: [{ kind: 'human', id: 'u_bob' }] }));
      expect(err.code).to.equal('AUTHORIZATION_UNAVAILABLE');
    });
  }
});
