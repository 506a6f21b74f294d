import { expect } from 'chai';
import type { DevCoreHandle } from '../server.ts';
import { DEMO, SERVICE_TOKEN, startTestDevCore } from '../../test/dev-core-harness.ts';

const service = { authorization: `Bearer ${SERVICE_TOKEN}`, 'content-type': 'application/json' };
const decision = { principal: { kind: 'user', id: 'u_alice', tokenId: 'jti-u_alice', clientId: 'dev-core-demo-app' }, repositoryId: DEMO.repository, action: 'read' };

describe('dev-core route table', () => {
  let core: DevCoreHandle;
  before(async () => {
    core = await startTestDevCore();
  });
  after(() => core.close());

  it("answers a path no route declares with core's 404, not chat's envelope", async () => {
    for (const [method, path] of [['GET', '/nope'], ['POST', '/internal/v1/nope'], ['GET', '/dev/nope']]) {
      const response = await fetch(`${core.url}${path}`, { method });
      expect(response.status, path).to.equal(404);
      expect(await response.json()).to.deep.equal({ error: { code: 'not_found', message: 'no such endpoint' } });
    }
  });

  it('answers a declared path with another method 405, naming the methods it has in Allow', async () => {
    for (const [method, path, allow] of [
      ['GET', '/internal/v1/authorize', 'POST'],
      ['DELETE', '/dev/fixture', 'GET, PUT'],
      ['PUT', '/api/marketplace/oauth/token', 'OPTIONS, POST'],
    ]) {
      const response = await fetch(`${core.url}${path}`, { method });
      expect(response.status, `${method} ${path}`).to.equal(405);
      expect(response.headers.get('allow')).to.equal(allow);
    }
  });

  it('answers HEAD like GET without a body, and a preflight without Origin 204 without CORS headers', async () => {
    const head = await fetch(`${core.url}/issuers/marketplace/jwks.json`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(head.headers.get('cache-control')).to.equal('public, max-age=300');
    expect(await head.text()).to.equal('');
    const preflight = await fetch(`${core.url}/api/user/repositories`, { method: 'OPTIONS' });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal(null);
    expect(preflight.headers.get('vary')).to.equal('Origin');
  });

  it("gives every answer an X-Request-Id: the caller's when well formed, else a new one", async () => {
    const authorize = (requestId: string) =>
      fetch(`${core.url}/internal/v1/authorize`, { method: 'POST', headers: { ...service, 'x-request-id': requestId }, body: JSON.stringify(decision) });
    const kept = await authorize('chat-req-1');
    expect(kept.status).to.equal(200);
    expect(kept.headers.get('x-request-id')).to.equal('chat-req-1');
    const replaced = await authorize('not a request id');
    expect(replaced.status).to.equal(200);
    expect(replaced.headers.get('x-request-id')).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('refuses a JSON body it cannot read with 400 request_invalid, after the service token', async () => {
    for (const [headers, body] of [
      [service, '{"principal":'],
      [service, '"a string"'],
      [{ ...service, 'content-type': 'application/json; charset=latin1' }, JSON.stringify(decision)],
      [{ ...service, 'content-encoding': 'gzip' }, JSON.stringify(decision)],
    ] as const) {
      const response = await fetch(`${core.url}/internal/v1/authorize`, { method: 'POST', headers, body });
      expect(response.status, body).to.equal(400);
      expect(await response.json()).to.deep.equal({ error: { code: 'request_invalid', message: 'request body could not be read' } });
    }
    const unauthenticated = await fetch(`${core.url}/internal/v1/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"principal":' });
    expect(unauthenticated.status).to.equal(401);
  });

  it('refuses a form larger than 16 KiB, or content-coded, with 400 request_invalid and opens no session', async () => {
    for (const [headers, body] of [
      [{}, `userId=u_alice&pad=${'x'.repeat(17 * 1024)}`],
      [{ 'content-encoding': 'gzip' }, 'userId=u_alice'],
    ] as const) {
      const response = await fetch(`${core.url}/dev/session`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
      expect(response.status).to.equal(400);
      expect((await response.json()).error.code).to.equal('request_invalid');
      expect(response.headers.get('set-cookie')).to.equal(null);
    }
  });
});
