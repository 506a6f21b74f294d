import { expect } from 'chai';
import type { AcknowledgeInboxResponse, InboxPageResponse, MessageResponse } from '@chat/contracts';
import { bearer, type ApiResponse } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

const at = (body: string, mention: string) => {
  const start = Buffer.byteLength(body.slice(0, body.indexOf(mention)), 'utf8');
  return { startByte: start, endByte: start + Buffer.byteLength(mention, 'utf8') };
};

/** GET /v1/inbox (the principal inbox extension), validated against the OpenAPI document like every call. */
function feed(stack: Stack, token: string | undefined, query = ''): Promise<ApiResponse<InboxPageResponse>> {
  return stack.api.send<InboxPageResponse>({ method: 'GET', path: `/v1/inbox${query ? `?${query}` : ''}`, headers: bearer(token) });
}

function acknowledgeFeed(stack: Stack, token: string, json: unknown): Promise<ApiResponse<AcknowledgeInboxResponse>> {
  return stack.api.send<AcknowledgeInboxResponse>({ method: 'POST', path: '/v1/inbox/acknowledgements', headers: bearer(token), json });
}

/** The caller's feed once the notifier has written `count` notifications to it (it fans out after the append). */
async function feedOf(stack: Stack, token: string, count: number): Promise<InboxPageResponse> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await feed(stack, token);
    expectStatus(res, 200);
    if (res.body.items.length >= count || Date.now() > deadline) return res.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const mode of MODES) {
  describe(`[${mode}] extension: the principal inbox (the caller's feed across repositories)`, function () {
    this.timeout(180_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('lists what mentions of the caller wrote to its inboxes, in feed order, and acknowledges it there and per repository', async () => {
      const { scenario, actors } = await stack.scenario();
      const reader = scenario.users.reader;
      const readBot = scenario.bots.reader.id;
      const appended: MessageResponse[] = [];
      for (const scope of [{ repositoryId: scenario.repositoryId }, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }, { repositoryId: scenario.repositoryId }]) {
        const body = `@${reader} and @${readBot}, have a look`;
        const mentions = [
          { principalKind: 'human', principalId: reader, ...at(body, `@${reader}`) },
          { principalKind: 'bot', principalId: readBot, ...at(body, `@${readBot}`) },
        ];
        const res = await stack.api.append<MessageResponse>(scope, await actors.appendBot(), { bodyMarkdown: body, mentions });
        expectStatus(res, 201);
        appended.push(res.body);
      }

      const page = await feedOf(stack, await actors.reader(), 3);
      expect(page.items.map((n) => n.messageId)).to.have.members(appended.map((m) => m.messageId));
      expect(page.items.every((n) => n.targetKind === 'human' && n.targetId === reader && !n.acknowledged)).to.equal(true);
      expect(page.acknowledgedCursor).to.equal(null);
      // Each item is the one its repository inbox shows, with that inbox's cursor.
      const perRepository = await stack.api.send<InboxPageResponse>({
        method: 'GET',
        path: `/v1/repositories/${scenario.repositoryId}/inbox`,
        headers: bearer(await actors.reader()),
      });
      expect(page.items).to.deep.equal(perRepository.body.items);
      const botPage = await feedOf(stack, await actors.readBot(), 3);
      expect(botPage.items.map((n) => `${n.targetKind}:${n.targetId}`)).to.deep.equal(Array(3).fill(`bot:${readBot}`));

      // Acknowledging the feed's second position moves the repository inbox through the second item.
      const pageOfTwo = await feed(stack, await actors.reader(), 'limit=2');
      expect(pageOfTwo.body.items).to.deep.equal(page.items.slice(0, 2));
      const acked = await acknowledgeFeed(stack, await actors.reader(), { throughCursor: pageOfTwo.body.nextCursor, expectedCursor: null });
      expectStatus(acked, 200);
      expect(acked.body).to.deep.equal({ acknowledgedCursor: pageOfTwo.body.nextCursor, replayed: false });
      const after = await feed(stack, await actors.reader());
      expect(after.body.items.map((n) => n.acknowledged)).to.deep.equal([true, true, false]);
      expect(after.body.acknowledgedCursor).to.equal(pageOfTwo.body.nextCursor);
      const inbox = await stack.api.send<InboxPageResponse>({ method: 'GET', path: `/v1/repositories/${scenario.repositoryId}/inbox`, headers: bearer(await actors.reader()) });
      expect(inbox.body.acknowledgedCursor).to.equal(page.items[1]!.cursor);
      expectError(await acknowledgeFeed(stack, await actors.reader(), { throughCursor: after.body.nextCursor, expectedCursor: null }), 409, 'INBOX_CHECKPOINT_STALE');
      // Another principal's feed cursor, and an item's own inbox cursor, are no cursors of this feed.
      expectError(await feed(stack, await actors.readBot(), `cursor=${encodeURIComponent(pageOfTwo.body.nextCursor!)}`), 400, 'CURSOR_INVALID');
      expectError(await acknowledgeFeed(stack, await actors.reader(), { throughCursor: page.items[0]!.cursor }), 400, 'CURSOR_INVALID');
    });

    it('answers an outsider an empty feed, and refuses a revoked credential and a missing token with 401', async () => {
      const { actors } = await stack.scenario();
      const outsider = await feed(stack, await actors.outsider());
      expectStatus(outsider, 200);
      expect(outsider.body).to.deep.equal({ items: [], nextCursor: null, acknowledgedCursor: null });
      expectError(await feed(stack, await actors.revokedBot()), 401, 'TOKEN_REJECTED');
      expectError(await feed(stack, undefined), 401, 'AUTHENTICATION_REQUIRED');
      expectStatus(await acknowledgeFeed(stack, await actors.revokedBot(), { throughCursor: 'x' }), 401);
    });
  });
}
