import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, SERVICE_TOKEN, startTestDevCore } from '../../test/dev-core-harness.ts';

const service = { authorization: `Bearer ${SERVICE_TOKEN}` };

/** A user as chat names it to core: with its token's `jti` and `client_id`. */
const user = (id: string, tokenId = `jti-${id}`, clientId = 'dev-core-demo-app') => ({ kind: 'user', id, tokenId, clientId });

describe('dev-core /internal/v1/*', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());
  afterEach(async () => {
    core.replaceFixture(await demoFixture());
  });

  const authorize = (body: unknown) => call(core.url, 'POST', '/internal/v1/authorize', body, service);

  describe('service authentication', () => {
    for (const [name, headers] of [
      ['no', {}],
      ['a wrong', { authorization: 'Bearer not-the-service-token' }],
      ['a basic', { authorization: `Basic ${Buffer.from(`chat:${SERVICE_TOKEN}`).toString('base64')}` }],
    ] as const) {
      it(`answers 401 service_unauthenticated to ${name} service token`, async () => {
        const body = { principal: user('u_alice'), repositoryId: DEMO.repository, action: 'read' };
        for (const path of ['/internal/v1/authorize', '/internal/v1/mentions/resolve']) {
          const response = await call(core.url, 'POST', path, body, headers);
          expect(response.status).to.equal(401);
          expect(response.body.error.code).to.equal('service_unauthenticated');
        }
      });
    }
  });

  describe('POST /internal/v1/authorize', () => {
    const bot = (id: string, credentialId: string) => ({ kind: 'bot', id, credentialId });
    const cases: { name: string; principal: object; repositoryId: string; branchId?: string; action: string; expected: object }[] = [
      { name: 'writer writes', principal: user('u_alice'), repositoryId: DEMO.repository, action: 'write', expected: { decision: 'allow', scopeState: 'active', subject: { kind: 'user', id: 'u_alice' } } },
      { name: 'reader reads', principal: user('u_bob'), repositoryId: DEMO.repository, action: 'read', expected: { decision: 'allow', scopeState: 'active' } },
      { name: 'reader writes', principal: user('u_bob'), repositoryId: DEMO.repository, action: 'write', expected: { decision: 'deny', scopeState: 'active' } },
      { name: 'non-member reads', principal: user('u_carol'), repositoryId: DEMO.repository, action: 'read', expected: { decision: 'deny', scopeState: 'active' } },
      { name: 'unknown repository', principal: user('u_alice'), repositoryId: '01JGFJK3W8GE2RMDX78EQVVVR6', action: 'read', expected: { decision: 'deny', scopeState: 'active' } },
      { name: 'branch of the repository', principal: user('u_bob'), repositoryId: DEMO.repository, branchId: DEMO.activeBranch, action: 'read', expected: { decision: 'allow', scopeState: 'active' } },
      { name: 'branch of another repository', principal: user('u_alice'), repositoryId: DEMO.repository, branchId: DEMO.archivedRepositoryBranch, action: 'read', expected: { decision: 'deny', scopeState: 'active' } },
      { name: 'deleted branch is sealed', principal: user('u_alice'), repositoryId: DEMO.repository, branchId: DEMO.deletedBranch, action: 'write', expected: { decision: 'allow', scopeState: 'sealed' } },
      { name: 'archived repository is sealed', principal: user('u_alice'), repositoryId: DEMO.archivedRepository, action: 'read', expected: { decision: 'allow', scopeState: 'sealed' } },
      { name: 'non-member of an archived repository learns nothing', principal: user('u_bob'), repositoryId: DEMO.archivedRepository, action: 'read', expected: { decision: 'deny', scopeState: 'active' } },
      { name: 'bot appends through its grant', principal: bot('b_ci', 'c_1'), repositoryId: DEMO.repository, action: 'write', expected: { decision: 'allow', scopeState: 'active', subject: { kind: 'organization', id: 'o_acme' }, botCredentialId: 'c_1', botGrantId: 'g_1' } },
      { name: 'bot reads a branch', principal: bot('b_ci', 'c_1'), repositoryId: DEMO.repository, branchId: DEMO.activeBranch, action: 'read', expected: { decision: 'allow', botGrantId: 'g_1' } },
      { name: 'read-only bot appends', principal: bot('b_reader', 'c_reader'), repositoryId: DEMO.repository, action: 'write', expected: { decision: 'deny' } },
      { name: 'bot without a grant on the repository', principal: bot('b_ci', 'c_1'), repositoryId: DEMO.archivedRepository, action: 'read', expected: { decision: 'deny' } },
      { name: 'revoked credential', principal: bot('b_ci', 'c_2'), repositoryId: DEMO.repository, action: 'read', expected: { decision: 'principal_invalid' } },
      { name: 'unknown credential', principal: bot('b_ci', 'c_404'), repositoryId: DEMO.repository, action: 'read', expected: { decision: 'principal_invalid' } },
      { name: 'credential of another bot', principal: bot('b_ci', 'c_reader'), repositoryId: DEMO.repository, action: 'read', expected: { decision: 'principal_invalid' } },
      { name: 'bot without credential', principal: { kind: 'bot', id: 'b_ci' }, repositoryId: DEMO.repository, action: 'read', expected: { decision: 'principal_invalid' } },
      { name: 'user without token id', principal: { kind: 'user', id: 'u_alice', clientId: 'dev-core-demo-app' }, repositoryId: DEMO.repository, action: 'read', expected: { decision: 'principal_invalid' } },
      { name: 'user without client id', principal: { kind: 'user', id: 'u_alice', tokenId: 'jti-1' }, repositoryId: DEMO.repository, action: 'read', expected: { decision: 'principal_invalid' } },
    ];
    for (const c of cases) {
      it(`decides: ${c.name}`, async () => {
        const { status, body } = await authorize({ principal: c.principal, repositoryId: c.repositoryId, branchId: c.branchId, action: c.action });
        expect(status).to.equal(200);
        expect(body).to.deep.include(c.expected);
        expect(body.decisionId).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        if (body.decision !== 'allow') expect(body).to.have.all.keys('decision', 'decisionId', 'scopeState');
      });
    }

    it('gives every decision its own ID', async () => {
      const body = { principal: user('u_alice'), repositoryId: DEMO.repository, action: 'read' };
      const [a, b] = await Promise.all([authorize(body), authorize(body)]);
      expect(a.body.decisionId).to.not.equal(b.body.decisionId);
    });

    it('denies a bot whose grant was revoked, at once', async () => {
      const fixture: any = await demoFixture();
      fixture.bots[0].grants[0].state = 'revoked';
      core.replaceFixture(fixture);
      const { body } = await authorize({ principal: bot('b_ci', 'c_1'), repositoryId: DEMO.repository, action: 'read' });
      expect(body.decision).to.equal('deny');
    });

    it('answers 400 to a malformed request', async () => {
      expect((await authorize({ principal: user('u_alice'), repositoryId: DEMO.repository, action: 'admin' })).status).to.equal(400);
      expect((await authorize({ repositoryId: DEMO.repository, action: 'read' })).status).to.equal(400);
    });
  });

  describe('POST /internal/v1/authorize/batch', () => {
    const batch = (body: unknown, headers: Record<string, string> = service) => call(core.url, 'POST', '/internal/v1/authorize/batch', body, headers);
    const requests = [
      { principal: user('u_alice'), repositoryId: DEMO.repository, action: 'write', requestId: 'req-1' },
      { principal: user('u_bob'), repositoryId: DEMO.repository, action: 'write' },
      { principal: { kind: 'bot', id: 'b_ci', credentialId: 'c_2' }, repositoryId: DEMO.repository, action: 'read' },
      { principal: user('u_alice'), repositoryId: DEMO.repository, branchId: DEMO.deletedBranch, action: 'write' },
      { principal: { kind: 'bot', id: 'b_ci', credentialId: 'c_1' }, repositoryId: DEMO.repository, action: 'write' },
    ];

    it('decides each request as the single endpoint does, in order, each with its own decision ID', async () => {
      const { status, body } = await batch({ requests });
      expect(status).to.equal(200);
      expect(body.decisions.map((d: { decision: string; scopeState: string }) => `${d.decision}/${d.scopeState}`)).to.deep.equal([
        'allow/active',
        'deny/active',
        'principal_invalid/active',
        'allow/sealed',
        'allow/active',
      ]);
      expect(body.decisions[4]).to.deep.include({ subject: { kind: 'organization', id: 'o_acme' }, botCredentialId: 'c_1', botGrantId: 'g_1' });
      for (const [i, request] of requests.entries()) {
        const { requestId: _requestId, ...single } = request;
        const alone = (await call(core.url, 'POST', '/internal/v1/authorize', single, service)).body;
        const { decisionId: _a, ...fromBatch } = body.decisions[i];
        const { decisionId: _b, ...fromSingle } = alone;
        expect(fromBatch, `request ${i}`).to.deep.equal(fromSingle);
      }
      expect(new Set(body.decisions.map((d: { decisionId: string }) => d.decisionId)).size).to.equal(requests.length);
    });

    it('answers 400 to an empty, oversized or malformed batch, and 401 without the service token', async () => {
      expect((await batch({ requests: [] })).status).to.equal(400);
      expect((await batch({ requests: Array.from({ length: 101 }, () => requests[0]) })).status).to.equal(400);
      expect((await batch({ requests: [{ ...requests[0], action: 'admin' }] })).status).to.equal(400);
      expect((await batch([requests[0]])).status).to.equal(400);
      const unauthenticated = await batch({ requests }, {});
      expect(unauthenticated.status).to.equal(401);
      expect(unauthenticated.body.error.code).to.equal('service_unauthenticated');
    });

    it('plays the faults like the single endpoint', async () => {
      await call(core.url, 'POST', '/dev/faults', { authorization: 'unavailable' });
      try {
        expect((await batch({ requests })).status).to.equal(503);
      } finally {
        await call(core.url, 'POST', '/dev/faults', { authorization: 'ok' });
      }
      expect((await batch({ requests })).status).to.equal(200);
    });
  });

  describe('POST /internal/v1/mentions/resolve', () => {
    const targets = [
      { kind: 'human', id: 'u_alice' },
      { kind: 'human', id: 'u_carol' },
      { kind: 'bot', id: 'b_ci' },
      { kind: 'bot', id: 'b_nobody' },
    ];
    const mint = (type: 'core_resource' | 'human', subjectId = 'u_alice', expiresInSeconds = 600) =>
      core.mintToken({ type, subjectId, expiresInSeconds });
    const resolve = (body: unknown, resource?: string) =>
      call(core.url, 'POST', '/internal/v1/mentions/resolve', body, {
        ...service,
        ...(resource === undefined ? {} : { 'x-core-resource-authorization': resource }),
      });

    const alice = { kind: 'user', id: 'u_alice' };

    it('marks targets that exist and may read the scope as valid, keeping order', async () => {
      const { status, body } = await resolve({ repositoryId: DEMO.repository, targets, author: alice }, `Bearer ${await mint('core_resource')}`);
      expect(status).to.equal(200);
      expect(body.targets.map((t: { valid: boolean }) => t.valid)).to.deep.equal([true, false, true, false]);
      expect(body.targets[0]).to.deep.equal({ kind: 'human', id: 'u_alice', valid: true });
    });

    it('answers without a resource token (bot authors)', async () => {
      const { status, body } = await resolve({ repositoryId: DEMO.repository, branchId: DEMO.activeBranch, targets });
      expect(status).to.equal(200);
      expect(body.targets.map((t: { valid: boolean }) => t.valid)).to.deep.equal([true, false, true, false]);
    });

    it('marks every target invalid when the scope does not exist', async () => {
      for (const scope of [
        { repositoryId: '01JGFJK3W8GE2RMDX78EQVVVR6' },
        { repositoryId: DEMO.repository, branchId: DEMO.archivedRepositoryBranch },
      ]) {
        const { body } = await resolve({ ...scope, targets });
        expect(body.targets.every((t: { valid: boolean }) => !t.valid)).to.equal(true);
      }
    });

    it('answers 401 resource_token_rejected to a bad resource token', async () => {
      const bad = [
        'Bearer not.a.jwt',
        `Bearer ${await mint('human')}`,
        `Bearer ${await mint('core_resource', 'u_alice', -60)}`,
        `Basic ${Buffer.from('u_alice:secret').toString('base64')}`,
        await mint('core_resource'),
      ];
      for (const header of bad) {
        const response = await resolve({ repositoryId: DEMO.repository, targets, author: alice }, header);
        expect(response.status).to.equal(401);
        expect(response.body.error.code).to.equal('resource_token_rejected');
      }
    });

    it("refuses a valid resource token that is not the author's own exactly like an invalid one", async () => {
      const bobs = `Bearer ${await mint('core_resource', 'u_bob')}`;
      const invalid = await resolve({ repositoryId: DEMO.repository, targets, author: alice }, 'Bearer not.a.jwt');
      expect(invalid.status).to.equal(401);
      for (const author of [alice, { kind: 'user', id: 'u_carol' }, { kind: 'bot', id: 'u_bob' }, undefined]) {
        const response = await resolve({ repositoryId: DEMO.repository, targets, ...(author === undefined ? {} : { author }) }, bobs);
        expect({ status: response.status, body: response.body }, JSON.stringify(author)).to.deep.equal({ status: invalid.status, body: invalid.body });
      }
      // The same token with its own author is accepted.
      const own = await resolve({ repositoryId: DEMO.repository, targets, author: { kind: 'user', id: 'u_bob' } }, bobs);
      expect(own.status).to.equal(200);
    });
  });
});
