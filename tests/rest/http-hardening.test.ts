import { expect } from 'chai';
import { ulid } from 'ulid';
import { errorCode, type ApiResponse } from '../harness/api-client.ts';
import { expectError } from '../harness/assertions.ts';
import { MODES, sharedStack, type Actors, type Stack } from '../harness/stacks.ts';
import type { Scenario } from '../harness/fixture-factory.ts';

function expect400(res: ApiResponse, codes: string[], label: string): void {
  expect(res.status, `${label}: ${res.text}`).to.equal(400);
  expect(codes, label).to.include(errorCode(res));
}

for (const mode of MODES) {
  describe(`[${mode}] invariant 7: HTTP hardening`, function () {
    this.timeout(60_000);
    let stack: Stack;
    let scenario: Scenario;
    let actors: Actors;
    let messagesPath: string;
    let auth: Record<string, string>;
    before(async () => {
      stack = await sharedStack(mode);
      ({ scenario, actors } = await stack.scenario());
      messagesPath = `/v1/repositories/${scenario.repositoryId}/room/messages`;
      auth = { authorization: `Bearer ${await actors.writer()}` };
    });

    it('invariant 7: an unknown route gives 404 in the error envelope', async () => {
      for (const path of ['/', '/v1', '/v1/', '/v2/repositories/01J00000000000000000000000/room', `/v1/repositories/${scenario.repositoryId}/rooms`, `/v1/repositories/${scenario.repositoryId}/room/messages/extra`, '/v1/openapi.yaml', '/%ZZ', '/v1/repositories']) {
        for (const method of ['GET', 'POST', 'DELETE']) {
          // `/` is the viewer's page in the all-in-one, not an API route: GET serves it, other methods get 405.
          if (path === '/') {
            if (method !== 'GET') expectError(await stack.api.send({ method, path, headers: auth }), 405, 'REQUEST_INVALID');
            continue;
          }
          expectError(await stack.api.send({ method, path, headers: auth }), 404, 'RESOURCE_NOT_FOUND');
        }
      }
    });

    it('invariant 7: a wrong method on a known path gives 405 in the error envelope with Allow', async () => {
      const room = `/v1/repositories/${scenario.repositoryId}/room`;
      const cases: Array<[string, string]> = [
        ['POST', room], ['PUT', room], ['DELETE', room], ['PATCH', room],
        ['PUT', messagesPath], ['DELETE', messagesPath], ['PATCH', messagesPath],
        ['POST', `/v1/repositories/${scenario.repositoryId}/branches/${scenario.branchId}/room`],
        ['DELETE', `/v1/repositories/${scenario.repositoryId}/branches/${scenario.branchId}/room/messages`],
        ['POST', '/v1/openapi.json'],
      ];
      for (const [method, path] of cases) {
        const res = await stack.api.send({ method, path, headers: auth, json: { bodyMarkdown: 'x' } });
        expect(res.status, `${method} ${path}`).to.equal(405);
        expect(res.headers.allow).to.be.a('string');
      }
    });

    it('invariant 7: malformed JSON, and JSON that is not an object, give 400', async () => {
      for (const raw of ['{"bodyMarkdown":', '{bodyMarkdown: "x"}', "{'bodyMarkdown':'x'}", '{"bodyMarkdown":"x"}}', '', ' ', '\u0000', '[]', '[{"bodyMarkdown":"x"}]', '42', '"x"', 'null', 'true', '{"bodyMarkdown":"x","bodyMarkdown":{}}']) {
        const res = await stack.api.send({ method: 'POST', path: messagesPath, headers: { ...auth, 'idempotency-key': ulid(), 'content-type': 'application/json' }, raw });
        expect400(res, ['REQUEST_INVALID', 'MESSAGE_INVALID'], JSON.stringify(raw));
      }
    });

    it('invariant 7: a wrong or missing content type gives 400 (no 415)', async () => {
      const body = JSON.stringify({ bodyMarkdown: 'typed' });
      for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonp']) {
        const headers: Record<string, string> = { ...auth, 'idempotency-key': ulid() };
        if (type !== undefined) headers['content-type'] = type;
        expect400(await stack.api.send({ method: 'POST', path: messagesPath, headers, raw: body }), ['REQUEST_INVALID'], String(type));
      }
      expect((await stack.api.list<{ items: unknown[] }>({ repositoryId: scenario.repositoryId }, await actors.reader())).body.items).to.have.length(0);
    });

    it('invariant 7: an oversized body gives 400, not 413', async () => {
      for (const size of [300 * 1024, 2 * 1024 * 1024]) {
        const raw = JSON.stringify({ bodyMarkdown: 'x'.repeat(size) });
        expect400(await stack.api.send({ method: 'POST', path: messagesPath, headers: { ...auth, 'idempotency-key': ulid(), 'content-type': 'application/json' }, raw }), ['REQUEST_INVALID', 'MESSAGE_INVALID'], `${size} bytes`);
      }
      // Below the parser's limit but above the message limit: the message rule answers.
      expectError(await stack.api.append({ repositoryId: scenario.repositoryId }, await actors.writer(), { bodyMarkdown: 'x'.repeat(20_000) }), 400, 'MESSAGE_INVALID');
    });

    it('invariant 7: non-ULID path parameters give 400 SCOPE_INVALID on every operation', async () => {
      const good = scenario.repositoryId;
      for (const bad of [good.toLowerCase(), 'abc', good.slice(1), good + '0', '8' + good.slice(1), 'I' + good.slice(1), encodeURIComponent(' ' + good), '%ZZ', '%C0%AE', '%FF' + good.slice(1)]) {
        const paths = [
          `/v1/repositories/${bad}/room`,
          `/v1/repositories/${bad}/room/messages`,
          `/v1/repositories/${good}/branches/${bad}/room`,
          `/v1/repositories/${bad}/branches/${scenario.branchId}/room/messages`,
          `/v1/repositories/${good}/branches/${bad}/room/messages`,
        ];
        for (const path of paths) {
          expectError(await stack.api.send({ method: 'GET', path, headers: auth }), 400, 'SCOPE_INVALID');
        }
        expectError(await stack.api.send({ method: 'POST', path: paths[1]!, headers: { ...auth, 'idempotency-key': ulid() }, json: { bodyMarkdown: 'x' } }), 400, 'SCOPE_INVALID');
      }
    });

    it('invariant 7 / section 2: an unknown property in the append body gives 400', async () => {
      for (const body of [{ bodyMarkdown: 'x', roomId: 'r' }, { bodyMarkdown: 'x', senderId: 'someone-else' }, { bodyMarkdown: 'x', __proto__: { polluted: true }, constructor: {} }]) {
        const res = await stack.api.append({ repositoryId: scenario.repositoryId }, await actors.writer(), body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      const proto = await stack.api.send({ method: 'POST', path: messagesPath, headers: { ...auth, 'idempotency-key': ulid(), 'content-type': 'application/json' }, raw: '{"bodyMarkdown":"x","__proto__":{"isAdmin":true}}' });
      expect(proto.status).to.equal(400);
    });

    it('every JSON answer, success or error envelope, of the API and the stream routes is Cache-Control: no-store', async () => {
      const scope = { repositoryId: scenario.repositoryId };
      const writer = await actors.writer();
      const key = ulid();
      const room = `/v1/repositories/${scenario.repositoryId}/room`;
      const answers: Array<[string, ApiResponse]> = [
        ['room', await stack.api.getRoom(scope, writer)],
        ['list', await stack.api.list(scope, writer)],
        ['append', await stack.api.append(scope, writer, { bodyMarkdown: 'cache check' }, { key })],
        ['append replay', await stack.api.append(scope, writer, { bodyMarkdown: 'cache check' }, { key })],
        ['inbox', await stack.api.send({ method: 'GET', path: `/v1/repositories/${scenario.repositoryId}/inbox`, headers: auth })],
        ['openapi', await stack.api.send({ method: 'GET', path: '/v1/openapi.json' })],
        ['401', await stack.api.getRoom(scope, undefined)],
        ['403', await stack.api.getRoom({ repositoryId: ulid() }, writer)],
        ['append 400', await stack.api.append(scope, writer, { bodyMarkdown: '' })],
        ['404', await stack.api.send({ method: 'GET', path: '/v1/nothing', headers: auth })],
        ['405', await stack.api.send({ method: 'DELETE', path: room, headers: auth })],
        ['stream 401', await stack.api.send({ method: 'GET', path: `${room}/events`, headers: { accept: 'text/event-stream' } })],
        ['stream 400', await stack.api.send({ method: 'GET', path: `${room}/events?cursor=x`, headers: { ...auth, accept: 'text/event-stream', 'last-event-id': 'y' } })],
      ];
      for (const [label, res] of answers) {
        expect(res.headers['content-type'], label).to.match(/^application\/json/);
        expect(res.headers['cache-control'], `${label} (${res.status})`).to.equal('no-store');
      }
      expect(answers.map(([, res]) => res.status)).to.deep.equal([200, 200, 201, 200, 200, 200, 401, 403, 400, 404, 405, 401, 400]);
    });

    it('section 9: the served contract is the committed OpenAPI 3.1 document', async () => {
      const { openApiDocument } = await import('../harness/openapi-validator.ts');
      const res = await stack.api.send({ method: 'GET', path: '/v1/openapi.json' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(openApiDocument);
      expect((res.body as { openapi: string }).openapi).to.match(/^3\.1\./);
    });
  });
}
