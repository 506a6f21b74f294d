import { request } from 'node:http';
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { DevCoreHandle } from '../server.ts';
import { call, DEMO, demoFixture, SERVICE_TOKEN, startTestDevCore } from '../../test/dev-core-harness.ts';

describe('dev-core /dev/* and JWKS', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());

  describe('GET /issuers/:issuer/jwks.json', () => {
    it('serves one ES256 public key per issuer, each different', async () => {
      const kids = new Set<string>();
      for (const issuer of ['marketplace', 'bots', 'idp']) {
        const { status, body } = await call(core.url, 'GET', `/issuers/${issuer}/jwks.json`);
        expect(status).to.equal(200);
        expect(body.keys).to.have.length(1);
        expect(body.keys[0]).to.include({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
        expect(body.keys[0]).to.not.have.property('d');
        kids.add(body.keys[0].kid);
      }
      expect(kids.size).to.equal(3);
    });

    it('answers 404 for an unknown issuer', async () => {
      expect((await call(core.url, 'GET', '/issuers/evil/jwks.json')).status).to.equal(404);
    });
  });

  describe('POST /dev/tokens', () => {
    const expectations = [
      { type: 'human', subjectId: 'u_alice', typ: 'at+jwt', issuer: 'marketplace', aud: 'chat' },
      { type: 'bot', subjectId: 'b_ci', typ: 'bot+jwt', issuer: 'bots', aud: 'chat' },
      { type: 'core_resource', subjectId: 'u_alice', typ: 'at+jwt', issuer: 'marketplace', aud: 'core' },
      { type: 'id_token', subjectId: 'u_alice', typ: 'JWT', issuer: 'idp', aud: 'core-web' },
      { type: 'app', subjectId: 'u_alice', typ: 'app+jwt', issuer: 'marketplace', aud: 'marketplace' },
    ] as const;

    for (const e of expectations) {
      it(`mints a ${e.type} token signed by the ${e.issuer} issuer`, async () => {
        const { status, body } = await call(core.url, 'POST', '/dev/tokens', { type: e.type, subjectId: e.subjectId });
        expect(status).to.equal(200);
        expect(decodeProtectedHeader(body.token)).to.include({ alg: 'ES256', typ: e.typ });
        const jwks = (await call(core.url, 'GET', `/issuers/${e.issuer}/jwks.json`)).body;
        const { payload } = await jwtVerify(body.token, createLocalJWKSet(jwks), {
          issuer: `${core.url}/${e.issuer}`,
          audience: e.aud,
          algorithms: ['ES256'],
        });
        expect(payload.sub).to.equal(e.subjectId);
        expect(payload.exp! - payload.iat!).to.equal(3600);
        expect(payload.jti).to.be.a('string');
      });
    }

    it('binds a bot token to the named credential, or the first active one', async () => {
      const named = await call(core.url, 'POST', '/dev/tokens', { type: 'bot', subjectId: 'b_ci', credentialId: 'c_2' });
      const first = await call(core.url, 'POST', '/dev/tokens', { type: 'bot', subjectId: 'b_ci' });
      const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
      expect(claims(named.body.token).cid).to.equal('c_2');
      expect(claims(first.body.token).cid).to.equal('c_1');
    });

    it('names the marketplace app in client_id: the demo app, or the one asked for', async () => {
      const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
      for (const type of ['human', 'core_resource', 'app']) {
        const plain = await call(core.url, 'POST', '/dev/tokens', { type, subjectId: 'u_alice' });
        const named = await call(core.url, 'POST', '/dev/tokens', { type, subjectId: 'u_alice', clientId: 'app-other' });
        expect(claims(plain.body.token).client_id, type).to.equal('dev-core-demo-app');
        expect(claims(named.body.token).client_id, type).to.equal('app-other');
      }
    });

    it('honours expiresInSeconds, including negative values for expired tokens', async () => {
      const { body } = await call(core.url, 'POST', '/dev/tokens', { type: 'human', subjectId: 'u_bob', expiresInSeconds: -60 });
      const payload = JSON.parse(Buffer.from(body.token.split('.')[1], 'base64url').toString());
      expect(payload.exp - payload.iat).to.equal(-60);
    });

    const badRequests: [string, unknown][] = [
      ['unknown user', { type: 'human', subjectId: 'u_nobody' }],
      ['unknown bot', { type: 'bot', subjectId: 'b_nobody' }],
      ['a user as bot', { type: 'bot', subjectId: 'u_alice' }],
      ['unknown credential', { type: 'bot', subjectId: 'b_ci', credentialId: 'c_404' }],
      ['credential on a human token', { type: 'human', subjectId: 'u_alice', credentialId: 'c_1' }],
      ['client id on a bot token', { type: 'bot', subjectId: 'b_ci', clientId: 'app-other' }],
      ['client id on an ID token', { type: 'id_token', subjectId: 'u_alice', clientId: 'app-other' }],
      ['empty client id', { type: 'human', subjectId: 'u_alice', clientId: '' }],
      ['unknown type', { type: 'root', subjectId: 'u_alice' }],
      ['missing subject', { type: 'human' }],
      ['fractional lifetime', { type: 'human', subjectId: 'u_alice', expiresInSeconds: 1.5 }],
      ['not an object', '[1,2]'],
      ['malformed JSON', '{"type":'],
    ];
    for (const [name, body] of badRequests) {
      it(`answers 400 for ${name}`, async () => {
        const response = await call(core.url, 'POST', '/dev/tokens', body);
        expect(response.status).to.equal(400);
        expect(response.body.error.code).to.be.a('string');
      });
    }
  });

  describe('GET and PUT /dev/fixture', () => {
    afterEach(async () => {
      core.replaceFixture(await demoFixture());
    });

    it('reads the bundled demo fixture by default', async () => {
      const { status, body } = await call(core.url, 'GET', '/dev/fixture');
      expect(status).to.equal(200);
      expect(body).to.deep.equal(await demoFixture());
    });

    it('replaces the data live: the next decision sees the change', async () => {
      const authorize = () =>
        call(
          core.url,
          'POST',
          '/internal/v1/authorize',
          { principal: { kind: 'user', id: 'u_bob', tokenId: 'jti-u_bob', clientId: 'dev-core-demo-app' }, repositoryId: DEMO.repository, action: 'write' },
          { authorization: `Bearer ${SERVICE_TOKEN}` },
        );
      expect((await authorize()).body.decision).to.equal('deny');
      const fixture = await demoFixture();
      (fixture.repositories as { members: Record<string, string> }[])[0]!.members['u_bob'] = 'write';
      const put = await call(core.url, 'PUT', '/dev/fixture', fixture);
      expect(put.status).to.equal(200);
      expect((await call(core.url, 'GET', '/dev/fixture')).body).to.deep.equal(fixture);
      expect((await authorize()).body.decision).to.equal('allow');
    });

    const invalid: [string, (f: any) => unknown][] = [
      ['a non-ULID repository id', (f) => ((f.repositories[0].id = 'repo-1'), f)],
      ['a lower-case ULID', (f) => ((f.repositories[0].id = f.repositories[0].id.toLowerCase()), f)],
      ['an unknown repository state', (f) => ((f.repositories[0].state = 'frozen'), f)],
      ['an unknown branch state', (f) => ((f.repositories[0].branches[0].state = 'gone'), f)],
      ['an unknown member role', (f) => ((f.repositories[0].members.u_bob = 'admin'), f)],
      ['an unknown credential state', (f) => ((f.bots[0].credentials[0].state = 'paused'), f)],
      ['an unknown capability', (f) => ((f.bots[0].grants[0].capabilities = ['repo:delete']), f)],
      ['an unknown subject kind', (f) => ((f.bots[0].grants[0].subject.kind = 'team'), f)],
      ['a duplicate branch id', (f) => (f.repositories[1].branches.push({ ...f.repositories[0].branches[0] }), f)],
      ['a duplicate bot id', (f) => (f.bots.push({ ...f.bots[0] }), f)],
      ['users that is not an array', (f) => ((f.users = { id: 'u_alice' }), f)],
      ['an array body', () => []],
    ];
    for (const [name, edit] of invalid) {
      it(`refuses ${name} with 400 and keeps the old data`, async () => {
        const response = await call(core.url, 'PUT', '/dev/fixture', edit(await demoFixture()));
        expect(response.status).to.equal(400);
        expect(response.body.error.code).to.equal('fixture_invalid');
        expect(response.body.error.issues).to.be.an('array').that.is.not.empty;
        expect((await call(core.url, 'GET', '/dev/fixture')).body).to.deep.equal(await demoFixture());
      });
    }
  });

  describe('POST /dev/faults', () => {
    const authorize = () =>
      call(
        core.url,
        'POST',
        '/internal/v1/authorize',
        { principal: { kind: 'user', id: 'u_alice', tokenId: 'jti-u_alice', clientId: 'dev-core-demo-app' }, repositoryId: DEMO.repository, action: 'read' },
        { authorization: `Bearer ${SERVICE_TOKEN}` },
      );
    afterEach(() => core.setFaults({ authorization: 'ok' }));

    it('unavailable makes the service API answer 503 while JWKS keep answering', async () => {
      const set = await call(core.url, 'POST', '/dev/faults', { authorization: 'unavailable' });
      expect(set.status).to.equal(200);
      expect((await authorize()).status).to.equal(503);
      const mentions = await call(core.url, 'POST', '/internal/v1/mentions/resolve', { repositoryId: DEMO.repository, targets: [] });
      expect(mentions.status).to.equal(503);
      expect((await call(core.url, 'GET', '/issuers/marketplace/jwks.json')).status).to.equal(200);
      await call(core.url, 'POST', '/dev/faults', { authorization: 'ok' });
      expect((await authorize()).status).to.equal(200);
    });

    it('slow delays the service API by latencyMs', async () => {
      await call(core.url, 'POST', '/dev/faults', { authorization: 'slow', latencyMs: 400 });
      const started = Date.now();
      expect((await authorize()).status).to.equal(200);
      expect(Date.now() - started).to.be.at.least(380);
      expect((await call(core.url, 'GET', '/dev/faults')).body).to.deep.equal({ authorization: 'slow', latencyMs: 400 });
    });

    it('refuses an unknown fault with 400', async () => {
      expect((await call(core.url, 'POST', '/dev/faults', { authorization: 'flaky' })).status).to.equal(400);
      expect((await call(core.url, 'POST', '/dev/faults', { authorization: 'slow', latencyMs: -1 })).status).to.equal(400);
    });
  });

  describe('GET /dev/calls', () => {
    it('counts the calls each service endpoint received, refused ones included', async () => {
      const before = (await call(core.url, 'GET', '/dev/calls')).body;
      expect(Object.keys(before).sort()).to.deep.equal(['authorize', 'authorizeBatch', 'listRepositories', 'resolveMentions']);
      const service = { authorization: `Bearer ${SERVICE_TOKEN}` };
      const decision = { principal: { kind: 'user', id: 'u_alice', tokenId: 'jti-u_alice', clientId: 'dev-core-demo-app' }, repositoryId: DEMO.repository, action: 'read' };
      expect((await call(core.url, 'POST', '/internal/v1/authorize', decision, service)).status).to.equal(200);
      // Without a JSON content type the body is not read: refused as missing.
      const untyped = await fetch(`${core.url}/internal/v1/authorize`, { method: 'POST', headers: service, body: JSON.stringify(decision) });
      expect(untyped.status).to.equal(400);
      expect((await call(core.url, 'POST', '/internal/v1/authorize/batch', { requests: [decision] }, service)).status).to.equal(200);
      expect((await call(core.url, 'POST', '/internal/v1/principals/repositories', { principal: decision.principal, action: 'read' }, service)).status).to.equal(200);
      expect((await call(core.url, 'POST', '/internal/v1/mentions/resolve', { repositoryId: DEMO.repository, targets: [] }, service)).status).to.equal(200);
      expect((await call(core.url, 'POST', '/internal/v1/mentions/resolve', { repositoryId: DEMO.repository, targets: [] })).status).to.equal(401);
      const after = (await call(core.url, 'GET', '/dev/calls')).body;
      expect({
        authorize: after.authorize - before.authorize,
        authorizeBatch: after.authorizeBatch - before.authorizeBatch,
        listRepositories: after.listRepositories - before.listRepositories,
        resolveMentions: after.resolveMentions - before.resolveMentions,
      }).to.deep.equal({ authorize: 2, authorizeBatch: 1, listRepositories: 1, resolveMentions: 2 });
    });
  });

  describe('the Host check of /dev/* (DNS rebinding)', () => {
    /** Sends a request with exactly `host` as its Host header (fetch would put the URL's own). */
    function withHost(path: string, host: string | undefined, method = 'GET', body?: unknown): Promise<{ status: number; body: any }> {
      return new Promise((resolve, reject) => {
        const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
        const req = request({ host: '127.0.0.1', port: core.port, path, method, headers, setHost: false }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode!, body: text === '' ? undefined : JSON.parse(text) }));
        });
        if (host !== undefined) req.setHeader('host', host);
        req.on('error', reject).end(body === undefined ? undefined : JSON.stringify(body));
      });
    }

    it('serves loopback host names and addresses, with any port', async () => {
      for (const host of ['127.0.0.1', `127.0.0.1:${core.port}`, 'localhost', 'LocalHost:9', '[::1]', `[::1]:${core.port}`]) {
        expect((await withHost('/dev/faults', host)).status, host).to.equal(200);
      }
    });

    it('refuses any other host with 403 host_not_allowed before the route runs', async () => {
      const before = (await call(core.url, 'GET', '/dev/fixture')).body;
      // Node itself answers a request without a Host header 400, before any route.
      expect((await withHost('/dev/faults', undefined)).status).to.equal(400);
      for (const host of ['evil.example', `evil.example:${core.port}`, 'localhost.evil.example', '127.0.0.1.nip.io', '10.0.0.5', '[::2]', 'user@127.0.0.1', '127.0.0.1/x', '']) {
        for (const [method, path, body] of [
          ['GET', '/dev/faults'],
          ['POST', '/dev/faults', { authorization: 'unavailable' }],
          ['POST', '/dev/tokens', { type: 'human', subjectId: 'u_alice' }],
          ['PUT', '/dev/fixture', { users: [] }],
          ['GET', '/dev/revocations'],
          ['POST', '/dev/revocations', { clientId: 'dev-core-demo-app' }],
          ['GET', '/dev/calls'],
          ['POST', '/dev/session', { userId: 'u_alice' }],
          ['GET', '/DEV/fixture'],
        ] as const) {
          const answer = await withHost(path, host, method, body);
          expect(answer.status, `${method} ${path} with Host ${host}`).to.equal(403);
          expect(answer.body.error.code).to.equal('host_not_allowed');
          expect(answer.body).to.not.have.property('token');
        }
      }
      expect((await call(core.url, 'GET', '/dev/fixture')).body, 'the fixture was not replaced').to.deep.equal(before);
      expect((await call(core.url, 'GET', '/dev/faults')).body.authorization, 'no fault was set').to.equal('ok');
      expect((await call(core.url, 'GET', '/dev/revocations')).body.revocations, 'nothing was revoked').to.deep.equal([]);
      // Only the development surface is guarded: chat reaches core by whatever name it is configured with.
      expect((await withHost('/issuers/marketplace/jwks.json', 'core.internal')).status).to.equal(200);
    });

    it("serves the host of dev-core's public URL", async () => {
      const named = await startTestDevCore({ publicUrl: 'http://dev-core.test:8081/' });
      try {
        const answer = await new Promise<number>((resolve, reject) => {
          request({ host: '127.0.0.1', port: named.port, path: '/dev/faults', headers: { host: 'dev-core.test:8081' } }, (res) => resolve(res.resume().statusCode!)).on('error', reject).end();
        });
        expect(answer).to.equal(200);
      } finally {
        await named.close();
      }
    });
  });
});
