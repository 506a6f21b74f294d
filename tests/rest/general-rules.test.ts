import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import type { ApiResponse } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

/** An error answer without its per-request ID, so two answers can be compared for equality. */
function shape(res: ApiResponse) {
  const body = res.body as { error: { code: string; message: string } };
  return { status: res.status, code: body.error.code, message: body.error.message, retryAfter: res.headers['retry-after'] };
}

for (const mode of MODES) {
  describe(`[${mode}] section 1 general rules`, function () {
    this.timeout(60_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('section 1 rule 1: authorization runs before room lookup — a denied caller gets the same 403 for an existing, a virtual and an unknown room', async () => {
      const { scenario, actors } = await stack.scenario();
      const existing = { repositoryId: scenario.repositoryId };
      expectStatus(await stack.api.append(existing, await actors.writer(), { bodyMarkdown: 'secret' }), 201);
      const virtual = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const unknownRepo = { repositoryId: ulid() };
      const unknownBranch = { repositoryId: scenario.repositoryId, branchId: ulid() };
      for (const token of [await actors.outsider(), await actors.mint({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_1' })]) {
        const answers: Array<ReturnType<typeof shape>> = [];
        for (const scope of [existing, virtual, unknownRepo, unknownBranch]) {
          for (const res of [
            await stack.api.getRoom(scope, token),
            await stack.api.list(scope, token),
            await stack.api.list(scope, token, 'limit=5'),
            await stack.api.append(scope, token, { bodyMarkdown: 'probe' }),
          ]) {
            expectError(res, 403, 'AUTHORIZATION_DENIED');
            answers.push(shape(res));
          }
        }
        // Per operation, identical answers whatever the room's existence.
        for (let op = 0; op < 4; op++) {
          const perRoom = [0, 1, 2, 3].map((room) => answers[room * 4 + op]);
          expect(perRoom.every((a) => JSON.stringify(a) === JSON.stringify(perRoom[0]))).to.equal(true, JSON.stringify(perRoom));
        }
      }
    });

    it('section 1 rule 1: a denied caller cannot learn existence through cursor or limit validation either', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.outsider();
      for (const query of ['cursor=forged', 'limit=0', 'limit=abc']) {
        expectError(await stack.api.list({ repositoryId: scenario.repositoryId }, token, query), 403, 'AUTHORIZATION_DENIED');
      }
      expectError(await stack.api.append({ repositoryId: scenario.repositoryId }, token, { bodyMarkdown: '' }, { key: 'bad' }), 403, 'AUTHORIZATION_DENIED');
    });

    it('section 1 rule 2: a branch route with a branch of another repository (or an unknown branch) gives 403', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      // The writer may write both repositories, but the branch belongs to the other one.
      expectStatus(await stack.api.append({ repositoryId: scenario.otherRepositoryId, branchId: scenario.foreignBranchId }, token, { bodyMarkdown: 'home' }), 201);
      const foreign = { repositoryId: scenario.repositoryId, branchId: scenario.foreignBranchId };
      expectError(await stack.api.getRoom(foreign, token), 403, 'AUTHORIZATION_DENIED');
      expectError(await stack.api.list(foreign, token), 403, 'AUTHORIZATION_DENIED');
      expectError(await stack.api.append(foreign, token, { bodyMarkdown: 'cross' }), 403, 'AUTHORIZATION_DENIED');
      expectError(await stack.api.getRoom(foreign, await actors.appendBot()), 403, 'AUTHORIZATION_DENIED');
      expectError(await stack.api.getRoom({ repositoryId: scenario.repositoryId, branchId: ulid() }, token), 403, 'AUTHORIZATION_DENIED');
    });

    it('section 1 rule 5: every response carries X-Request-Id, a server-made ULID when the client sends none', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const answers = [
        await stack.api.getRoom(scope, await actors.reader()),
        await stack.api.list(scope, await actors.reader()),
        await stack.api.append(scope, await actors.writer(), { bodyMarkdown: 'x' }),
        await stack.api.getRoom(scope, undefined),
        await stack.api.send({ method: 'GET', path: '/nowhere' }),
        await stack.api.send({ method: 'GET', path: '/v1/openapi.json' }),
      ];
      for (const res of answers) expect(res.requestId).to.match(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
      expect(new Set(answers.map((a) => a.requestId)).size).to.equal(answers.length);
    });

    it('section 1 rule 5: a client X-Request-Id (1–128 of [A-Za-z0-9._:-]) is echoed in the header, the envelope and the stored message', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const long = 'a.b_c:d-E'.repeat(14).slice(0, 128);
      for (const id of ['x', 'trace-01:span.2_3', long]) {
        const ok = await stack.api.getRoom(scope, await actors.reader(), { 'x-request-id': id });
        expect(ok.requestId).to.equal(id);
        const err = await stack.api.getRoom(scope, await actors.outsider(), { 'x-request-id': id });
        expect(err.requestId).to.equal(id);
        expect((err.body as { error: { requestId: string } }).error.requestId).to.equal(id);
      }
      const appended = await stack.api.append<MessageResponse>(scope, await actors.writer(), { bodyMarkdown: 'traced' }, { requestId: 'client-trace-7' });
      expect(appended.body.requestId).to.equal('client-trace-7');
    });

    it('section 1 rule 5: a malformed X-Request-Id gives 400 REQUEST_ID_INVALID with a server-made ID', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      for (const id of ['', 'a'.repeat(129), 'has space', 'slash/inside', '<script>', 'quote"', 'comma,separated', 'ünïcode']) {
        const headers = { 'x-request-id': Buffer.from(id, 'utf8').toString('latin1') };
        const res = await stack.api.getRoom(scope, await actors.reader(), headers);
        expectError(res, 400, 'REQUEST_ID_INVALID');
        expect(res.requestId).to.not.equal(id);
        const append = await stack.api.append(scope, await actors.writer(), { bodyMarkdown: 'x' }, { requestId: headers['x-request-id'] });
        expectError(append, 400, 'REQUEST_ID_INVALID');
      }
      // Two X-Request-Id headers are one ambiguous value: refused too.
      const twice = await stack.api.send({ method: 'GET', path: `/v1/repositories/${scenario.repositoryId}/room`, headers: { authorization: `Bearer ${await actors.reader()}`, 'x-request-id': ['one', 'two'] } });
      expectError(twice, 400, 'REQUEST_ID_INVALID');
      expect((await stack.api.list<{ items: unknown[] }>(scope, await actors.reader())).body.items).to.have.length(0);
    });
  });
}
