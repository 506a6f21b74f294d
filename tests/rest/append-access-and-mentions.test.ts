import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse, RoomResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { errorCode } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

const at = (body: string, mention: string) => {
  const start = Buffer.byteLength(body.slice(0, body.indexOf(mention)), 'utf8');
  return { startByte: start, endByte: start + Buffer.byteLength(mention, 'utf8') };
};

for (const mode of MODES) {
  describe(`[${mode}] section 4 append: sealed rooms, capabilities and mentions`, function () {
    this.timeout(60_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('section 4 append rule 6: a sealed room (archived repository, deleted branch) gives 409 ROOM_SEALED', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      for (const scope of [
        { repositoryId: scenario.archivedRepositoryId },
        { repositoryId: scenario.archivedRepositoryId, branchId: scenario.archivedBranchId },
        { repositoryId: scenario.repositoryId, branchId: scenario.deletedBranchId },
      ]) {
        expectError(await stack.api.append(scope, token, { bodyMarkdown: 'too late' }), 409, 'ROOM_SEALED');
        const room = await stack.api.getRoom<RoomResponse>(scope, token);
        expect(room.body).to.include({ state: 'sealed', persisted: false, messageCount: 0 });
      }
    });

    it('section 3: a room whose repository gets archived is sealed (sealedAt set), stays readable and refuses appends', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      const scope = { repositoryId: scenario.repositoryId };
      const before = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: 'before archive' });
      expectStatus(before, 201);
      await stack.fixture.updateRepository(scenario.repositoryId, (r) => {
        r.state = 'archived';
      });
      expectError(await stack.api.append(scope, token, { bodyMarkdown: 'after archive' }), 409, 'ROOM_SEALED');
      const room = await stack.api.getRoom<RoomResponse>(scope, await actors.reader());
      expect(room.body).to.include({ state: 'sealed', persisted: true, messageCount: 1 });
      expect(room.body.sealedAt).to.be.a('string');
      const list = await stack.api.list<MessagePageResponse>(scope, await actors.reader());
      expect(list.body.items.map((m) => m.messageId)).to.deep.equal([before.body.messageId]);
      // Invariant: a room stays sealed even if core later reports it active again.
      await stack.fixture.updateRepository(scenario.repositoryId, (r) => {
        r.state = 'active';
      });
      expectError(await stack.api.append(scope, token, { bodyMarkdown: 'after unarchive' }), 409, 'ROOM_SEALED');
    });

    it('section 4 append rule 7: a read-only member, a bot with only room:read and a non-member get 403 AUTHORIZATION_DENIED', async () => {
      const { scenario, actors } = await stack.scenario();
      for (const scope of [{ repositoryId: scenario.repositoryId }, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }]) {
        expectError(await stack.api.append(scope, await actors.reader(), { bodyMarkdown: 'ro' }), 403, 'AUTHORIZATION_DENIED');
        expectError(await stack.api.append(scope, await actors.readBot(), { bodyMarkdown: 'ro bot' }), 403, 'AUTHORIZATION_DENIED');
        expectError(await stack.api.append(scope, await actors.outsider(), { bodyMarkdown: 'outsider' }), 403, 'AUTHORIZATION_DENIED');
        // The bot's grant is for this repository only.
        expectError(await stack.api.append({ repositoryId: scenario.otherRepositoryId }, await actors.appendBot(), { bodyMarkdown: 'x' }), 403, 'AUTHORIZATION_DENIED');
        const list = await stack.api.list<MessagePageResponse>(scope, await actors.reader());
        expect(list.body.items).to.have.length(0);
      }
    });

    it('section 4 append rule 7: write capability lets a human append and message:append lets a bot append', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      expectStatus(await stack.api.append(scope, await actors.writer(), { bodyMarkdown: 'human' }), 201);
      const bot = await stack.api.append<MessageResponse>(scope, await actors.appendBot(), { bodyMarkdown: 'bot' });
      expectStatus(bot, 201);
      expect(bot.body).to.include({ senderKind: 'bot', senderId: scenario.bots.appender.id });
    });

    it('section 4 append rule 8: human mentions without X-Service-Core-Authorization give 400 CORE_RESOURCE_TOKEN_REQUIRED', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const body = `hi @${scenario.users.reader}`;
      const mentions = [{ principalKind: 'human', principalId: scenario.users.reader, ...at(body, `@${scenario.users.reader}`) }];
      expectError(await stack.api.append(scope, await actors.writer(), { bodyMarkdown: body, mentions }), 400, 'CORE_RESOURCE_TOKEN_REQUIRED');
      expect((await stack.api.list<MessagePageResponse>(scope, await actors.reader())).body.items).to.have.length(0);
    });

    it('section 4 append rule 8: a bad X-Service-Core-Authorization gives CORE_RESOURCE_TOKEN_REJECTED', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const body = `hi @${scenario.users.reader}`;
      const mentions = [{ principalKind: 'human', principalId: scenario.users.reader, ...at(body, `@${scenario.users.reader}`) }];
      const chatToken = await actors.writer();
      const expired = await actors.mint({ type: 'core_resource', subjectId: scenario.users.writer, expiresInSeconds: -120 });
      for (const header of ['Bearer garbage', 'Basic dXNlcjpwYXNz', `Bearer ${chatToken}`, `Bearer ${expired}`, (await actors.coreResource()).slice(0, -4) + 'AAAA']) {
        const res = await stack.api.append(scope, chatToken, { bodyMarkdown: body, mentions }, { coreAuthorization: header });
        expect(errorCode(res), header.slice(0, 20)).to.equal('CORE_RESOURCE_TOKEN_REJECTED');
        expect([400, 401]).to.include(res.status);
      }
      expect((await stack.api.list<MessagePageResponse>(scope, await actors.reader())).body.items).to.have.length(0);
    });

    it("section 5: a core resource credential of someone else than the author gives 401 CORE_RESOURCE_TOKEN_REJECTED, answered like an expired one, and stores nothing", async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const writer = await actors.writer();
      const earlier = await stack.api.append<MessageResponse>(scope, writer, { bodyMarkdown: 'earlier' });
      expectStatus(earlier, 201);
      const body = `hi @${scenario.users.reader}`;
      const mentions = [{ principalKind: 'human', principalId: scenario.users.reader, ...at(body, `@${scenario.users.reader}`) }];
      const readersCredential = await actors.mint({ type: 'core_resource', subjectId: scenario.users.reader });
      const expired = await actors.mint({ type: 'core_resource', subjectId: scenario.users.writer, expiresInSeconds: -120 });
      const key = ulid();
      const stolen = await stack.api.append(scope, writer, { bodyMarkdown: body, mentions }, { key, coreAuthorization: `Bearer ${readersCredential}` });
      expectError(stolen, 401, 'CORE_RESOURCE_TOKEN_REJECTED');
      const invalid = await stack.api.append(scope, writer, { bodyMarkdown: body, mentions }, { coreAuthorization: `Bearer ${expired}` });
      expectError(invalid, 401, 'CORE_RESOURCE_TOKEN_REJECTED');
      expect((stolen.body as { error: { message: string } }).error.message).to.equal((invalid.body as { error: { message: string } }).error.message);
      const list = await stack.api.list<MessagePageResponse>(scope, await actors.reader());
      expect(list.body.items.map((m) => m.messageId)).to.deep.equal([earlier.body.messageId]);
      // The same append with the author's own credential, and the same key, is a new message.
      expectStatus(await stack.api.append(scope, writer, { bodyMarkdown: body, mentions }, { key, coreAuthorization: `Bearer ${await actors.coreResource()}` }), 201);
    });

    it('section 4 append rule 8: human mentions with a valid core resource credential are stored with their bindings (201)', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const body = `héllo @${scenario.users.reader} and @${scenario.bots.reader.id}`;
      const mentions = [
        { principalKind: 'human', principalId: scenario.users.reader, ...at(body, `@${scenario.users.reader}`) },
        { principalKind: 'bot', principalId: scenario.bots.reader.id, ...at(body, `@${scenario.bots.reader.id}`) },
      ];
      const res = await stack.api.append<MessageResponse>(scope, await actors.writer(), { bodyMarkdown: body, mentions }, { coreAuthorization: `Bearer ${await actors.coreResource()}` });
      expectStatus(res, 201);
      expect(res.body.mentions).to.deep.equal(mentions);
      // A bot's own grant is enough: it needs no core resource credential.
      const byBot = await stack.api.append<MessageResponse>(scope, await actors.appendBot(), { bodyMarkdown: body, mentions });
      expectStatus(byBot, 201);
      expect(byBot.body.mentions).to.deep.equal(mentions);
    });

    it('section 5 mentions: a target that does not exist or cannot read the scope gives 400 MENTION_TARGET_INVALID', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const core = `Bearer ${await actors.coreResource()}`;
      const targets = [
        { principalKind: 'human', principalId: 'u_nobody_at_all' },
        { principalKind: 'human', principalId: scenario.users.outsider },
        { principalKind: 'bot', principalId: 'b_no_such_bot' },
        { principalKind: 'bot', principalId: 'b_ci' },
        { principalKind: 'human', principalId: scenario.bots.reader.id },
      ];
      for (const target of targets) {
        const body = `ping @${target.principalId}`;
        const mentions = [{ ...target, ...at(body, `@${target.principalId}`) }];
        expectError(await stack.api.append(scope, await actors.writer(), { bodyMarkdown: body, mentions }, { coreAuthorization: core }), 400, 'MENTION_TARGET_INVALID');
        expectError(await stack.api.append(scope, await actors.appendBot(), { bodyMarkdown: body, mentions }), 400, 'MENTION_TARGET_INVALID');
      }
      expect((await stack.api.list<MessagePageResponse>(scope, await actors.reader())).body.items).to.have.length(0);
    });

    it('section 2 MentionBinding: spans outside the body, mid-character, empty or reversed, overlapping, or too many give 400 MENTION_INVALID', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const target = { principalKind: 'bot', principalId: scenario.bots.reader.id } as const;
      const body = 'é@bot and more text here'; // 'é' is two bytes
      const len = Buffer.byteLength(body, 'utf8');
      const spans: Array<{ name: string; mentions: unknown[] }> = [
        { name: 'ends beyond the body', mentions: [{ ...target, startByte: 2, endByte: len + 1 }] },
        { name: 'starts beyond the body', mentions: [{ ...target, startByte: len + 5, endByte: len + 9 }] },
        { name: 'starts mid-character', mentions: [{ ...target, startByte: 1, endByte: 6 }] },
        { name: 'ends mid-character', mentions: [{ ...target, startByte: 0, endByte: 1 }] },
        { name: 'start equals end', mentions: [{ ...target, startByte: 2, endByte: 2 }] },
        { name: 'start after end', mentions: [{ ...target, startByte: 6, endByte: 2 }] },
        { name: 'overlapping', mentions: [{ ...target, startByte: 2, endByte: 6 }, { ...target, startByte: 5, endByte: 9 }] },
        { name: 'negative start', mentions: [{ ...target, startByte: -1, endByte: 2 }] },
        { name: 'fractional', mentions: [{ ...target, startByte: 2.5, endByte: 6 }] },
        { name: 'unknown kind', mentions: [{ principalKind: 'team', principalId: 'x', startByte: 2, endByte: 6 }] },
        { name: 'extra property', mentions: [{ ...target, startByte: 2, endByte: 6, note: 'x' }] },
        { name: 'too many', mentions: Array.from({ length: 1000 }, (_, i) => ({ ...target, startByte: i, endByte: i + 1 })) },
      ];
      const manyBody = 'a'.repeat(1000);
      for (const { name, mentions } of spans) {
        const res = await stack.api.append(scope, await actors.appendBot(), { bodyMarkdown: name === 'too many' ? manyBody : body, mentions });
        expect({ status: res.status, code: errorCode(res) }, name).to.deep.equal({ status: 400, code: 'MENTION_INVALID' });
      }
      const valid = await stack.api.append<MessageResponse>(scope, await actors.appendBot(), { bodyMarkdown: body, mentions: [{ ...target, startByte: 2, endByte: 6 }] });
      expectStatus(valid, 201);
      expect((await stack.api.list<MessagePageResponse>(scope, await actors.reader())).body.items).to.have.length(1);
    });

    it('section 4 append rule 4: a retry with the same key and body but different mentions is IDEMPOTENCY_KEY_REUSED', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const target = { principalKind: 'bot', principalId: scenario.bots.reader.id } as const;
      const key = ulid();
      const body = 'ping @bot';
      expectStatus(await stack.api.append(scope, await actors.appendBot(), { bodyMarkdown: body, mentions: [{ ...target, startByte: 5, endByte: 9 }] }, { key }), 201);
      expectStatus(await stack.api.append(scope, await actors.appendBot(), { bodyMarkdown: body, mentions: [{ ...target, startByte: 5, endByte: 9 }] }, { key }), 200);
      expectError(await stack.api.append(scope, await actors.appendBot(), { bodyMarkdown: body }, { key }), 409, 'IDEMPOTENCY_KEY_REUSED');
    });
  });
}
