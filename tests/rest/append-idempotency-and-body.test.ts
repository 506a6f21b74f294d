import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse, RoomResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

for (const mode of MODES) {
  describe(`[${mode}] section 4 append: idempotency and body`, function () {
    this.timeout(60_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('section 4 append rule 1: a missing, lower-case or non-ULID Idempotency-Key gives 400 IDEMPOTENCY_KEY_INVALID', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const valid = ulid();
      const keys: Array<string | null> = [null, '', valid.toLowerCase(), 'not-a-ulid', valid.slice(1), valid + '0', '8' + valid.slice(1), valid.replace(/.$/, 'U'), valid.replace(/.$/, 'I')];
      for (const token of [await actors.writer(), await actors.appendBot()]) {
        for (const key of keys) {
          expectError(await stack.api.append(scope, token, { bodyMarkdown: 'hello' }, { key }), 400, 'IDEMPOTENCY_KEY_INVALID');
        }
      }
      const list = await stack.api.list<MessagePageResponse>(scope, await actors.writer());
      expect(list.body.items).to.have.length(0);
    });

    it('section 4 append rule 2: a new message returns 201 with the stored message', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const key = ulid();
      const res = await stack.api.append<MessageResponse>(scope, await actors.writer(), { bodyMarkdown: 'Hello **world**' }, { key, requestId: 'req.append-201:a' });
      expectStatus(res, 201);
      expect(res.body).to.include({
        repositoryId: scenario.repositoryId,
        branchId: scenario.branchId,
        senderKind: 'user',
        senderId: scenario.users.writer,
        bodyMarkdown: 'Hello **world**',
        bodyBytes: 15,
        idempotencyKey: key,
        requestId: 'req.append-201:a',
        renderPolicy: 'sanitized_markdown_html_v1',
      });
      expect(res.body.renderedHtml).to.contain('<strong>world</strong>');
      const list = await stack.api.list<MessagePageResponse>(scope, await actors.reader());
      expect(list.body.items).to.deep.equal([res.body]);
    });

    it('section 4 append rule 3: an exact retry returns 200 with the original message (same messageId and requestId)', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const token = await actors.writer();
      const key = ulid();
      const first = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: 'once only' }, { key, requestId: 'first-try' });
      expectStatus(first, 201);
      const retry = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: 'once only' }, { key, requestId: 'second-try' });
      expectStatus(retry, 200);
      expect(retry.body).to.deep.equal(first.body);
      expect(retry.body.requestId).to.equal('first-try');
      expect(retry.requestId).to.equal('second-try');
      const room = await stack.api.getRoom<RoomResponse>(scope, token);
      expect(room.body.messageCount).to.equal(1);
    });

    it('section 4 append rule 3 / invariant 3: concurrent requests with one key make exactly one message; the others get it with 200', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const token = await actors.appendBot();
      const key = ulid();
      const answers = await Promise.all(Array.from({ length: 12 }, () => stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: 'raced' }, { key })));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(answers.map((a) => a.body.messageId)).size).to.equal(1);
      const list = await stack.api.list<MessagePageResponse>(scope, token);
      expect(list.body.items.map((m) => m.messageId)).to.deep.equal([answers[0]!.body.messageId]);
    });

    it('section 4 append parameters: the key is scoped to the sender and the room (same key elsewhere is a new message)', async () => {
      const { scenario, actors } = await stack.scenario();
      const key = ulid();
      const repoRoom = { repositoryId: scenario.repositoryId };
      const branchRoom = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const a = await stack.api.append<MessageResponse>(repoRoom, await actors.writer(), { bodyMarkdown: 'same key' }, { key });
      const b = await stack.api.append<MessageResponse>(repoRoom, await actors.appendBot(), { bodyMarkdown: 'same key' }, { key });
      const c = await stack.api.append<MessageResponse>(branchRoom, await actors.writer(), { bodyMarkdown: 'same key' }, { key });
      for (const r of [a, b, c]) expectStatus(r, 201);
      expect(new Set([a.body.messageId, b.body.messageId, c.body.messageId]).size).to.equal(3);
    });

    it('section 4 append rule 4: reusing the key with different Markdown gives 409 IDEMPOTENCY_KEY_REUSED', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const token = await actors.writer();
      const key = ulid();
      expectStatus(await stack.api.append(scope, token, { bodyMarkdown: 'original' }, { key }), 201);
      expectError(await stack.api.append(scope, token, { bodyMarkdown: 'original ' }, { key }), 409, 'IDEMPOTENCY_KEY_REUSED');
      expectError(await stack.api.append(scope, token, { bodyMarkdown: 'changed' }, { key }), 409, 'IDEMPOTENCY_KEY_REUSED');
      const list = await stack.api.list<MessagePageResponse>(scope, token);
      expect(list.body.items.map((m) => m.bodyMarkdown)).to.deep.equal(['original']);
    });

    it('section 4 append rule 5: the body is 1–16,384 decoded UTF-8 bytes (multi-byte edge: é×8192 accepted, one byte more refused)', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const token = await actors.writer();
      const edge = 'é'.repeat(8192);
      expect(Buffer.byteLength(edge, 'utf8')).to.equal(16_384);
      const ok = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: edge });
      expectStatus(ok, 201);
      expect(ok.body.bodyBytes).to.equal(16_384);
      expect(ok.body.bodyMarkdown).to.equal(edge);
      const emoji = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: '😀'.repeat(4096) });
      expectStatus(emoji, 201);
      expect(emoji.body.bodyBytes).to.equal(16_384);
      expectError(await stack.api.append(scope, token, { bodyMarkdown: edge + 'a' }), 400, 'MESSAGE_INVALID');
      expectError(await stack.api.append(scope, token, { bodyMarkdown: '😀'.repeat(4095) + 'ééa' }), 400, 'MESSAGE_INVALID');
      expectError(await stack.api.append(scope, token, { bodyMarkdown: '' }), 400, 'MESSAGE_INVALID');
      // 16,384 ASCII characters written as \u escapes: counted after JSON decoding, not on the wire.
      const escaped = `{"bodyMarkdown":"${'\\u0041'.repeat(16_384)}"}`;
      const decoded = await stack.api.send<MessageResponse>({
        method: 'POST',
        path: `/v1/repositories/${scenario.repositoryId}/room/messages`,
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': ulid(), 'content-type': 'application/json' },
        raw: escaped,
      });
      expectStatus(decoded, 201);
      expect(decoded.body.bodyBytes).to.equal(16_384);
      const list = await stack.api.list<MessagePageResponse>(scope, token);
      expect(list.body.items).to.have.length(3);
    });

    it('section 4 append rule 5: a missing or non-string bodyMarkdown, a lone surrogate and unknown properties give 400', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const token = await actors.writer();
      for (const body of [{}, { bodyMarkdown: 42 }, { bodyMarkdown: null }, { bodyMarkdown: ['a'] }, { bodyMarkdown: 'x', extra: true }, { bodyMarkdown: 'x', mentions: 'all' }]) {
        const res = await stack.api.append(scope, token, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      const lone = await stack.api.send({
        method: 'POST',
        path: `/v1/repositories/${scenario.repositoryId}/room/messages`,
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': ulid(), 'content-type': 'application/json' },
        raw: '{"bodyMarkdown":"half \\ud83d pair"}',
      });
      expectError(lone, 400, 'MESSAGE_INVALID');
      expect((await stack.api.list<MessagePageResponse>(scope, token)).body.items).to.have.length(0);
    });
  });
}
