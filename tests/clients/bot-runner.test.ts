import { expect } from 'chai';
import { ChatTokenRejectedError, runBot, type BotContext } from '@chat/bot';
import { ChatClient, type NotificationResponse } from '@chat/client';
import type { MessageResponse } from '@chat/contracts';
import { ChildService } from '../harness/child-service.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';
import { buildBotWorld, mentionBody, type BotWorld } from './bot-world.ts';
import { FetchRecorder } from './sdk-fetch-recorder.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

for (const mode of MODES) {
  describe(`[${mode}] bot runner behaviour`, function () {
    this.timeout(180_000);
    let stack: Stack;
    let world: BotWorld;
    let writer: ChatClient;
    let botClient: ChatClient;
    let botToken: string;
    /** Every answer the SDK gets here (the bots' included) is checked against the OpenAPI document. */
    let recorder: FetchRecorder;

    beforeEach(async () => {
      recorder = new FetchRecorder();
      stack = await sharedStack(mode);
      const built = buildBotWorld(2);
      world = built.world;
      await stack.fixture.add(built.fixture);
      const writerToken = await stack.core.mintToken({ type: 'bot', subjectId: world.writer.id, credentialId: world.writer.credentialId, expiresInSeconds: 3600 });
      botToken = await stack.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds: 3600 });
      writer = new ChatClient({ baseUrl: stack.chat.url, token: writerToken, fetch: recorder.fetch });
      botClient = new ChatClient({ baseUrl: stack.chat.url, token: botToken, fetch: recorder.fetch });
    });

    afterEach(() => {
      expect(recorder.violations).to.deep.equal([]);
    });

    const inboxOf = async (repositoryId: string) => {
      const items: NotificationResponse[] = [];
      for await (const n of botClient.inboxNotifications({ repositoryId })) items.push(n);
      const checkpoint = (await botClient.listRepositoryInbox(repositoryId, { limit: 1 })).acknowledgedCursor ?? null;
      return { items, checkpoint };
    };

    it('hands notifications over in inbox order per repository, with their messages, and replies in the message\'s room (branch rooms too)', async () => {
      const posted: MessageResponse[] = [];
      for (let i = 0; i < 24; i += 1) {
        const repository = world.repositories[i % 2]!;
        const room = i % 3 === 0 ? { repositoryId: repository.repositoryId, branchId: repository.branchId } : { repositoryId: repository.repositoryId };
        posted.push((await writer.appendMessage(room, mentionBody(world.bot.id, i))).message);
      }
      const seen = new Map<string, string[]>();
      const bot = runBot({
        baseUrl: stack.chat.url,
        token: botToken,
        client: new ChatClient({ baseUrl: stack.chat.url, token: botToken, fetch: recorder.fetch }),
        repositories: world.repositories.map((r) => r.repositoryId),
        stopSignals: [],
        async handler({ notification, message, reply }: BotContext) {
          expect(message.messageId).to.equal(notification.messageId);
          expect(message.branchId ?? null).to.equal(notification.branchId ?? null);
          seen.set(notification.repositoryId, [...(seen.get(notification.repositoryId) ?? []), notification.notificationId]);
          const result = await reply(`re ${message.messageId}`);
          expect(result.message.roomId).to.equal(message.roomId);
        },
      });
      await until(async () => ([...seen.values()].flat().length === 24 ? true : undefined), 'all 24 notifications');
      await bot.stop();
      for (const { repositoryId } of world.repositories) {
        const inbox = await inboxOf(repositoryId);
        expect(seen.get(repositoryId)).to.deep.equal(inbox.items.map((n) => n.notificationId));
        expect(inbox.checkpoint).to.equal(inbox.items[inbox.items.length - 1]!.cursor);
      }
      for (const message of posted) {
        const room = message.branchId ? { repositoryId: message.repositoryId, branchId: message.branchId } : { repositoryId: message.repositoryId };
        const replies: MessageResponse[] = [];
        for await (const m of writer.roomMessages(room)) if (m.bodyMarkdown === `re ${message.messageId}`) replies.push(m);
        expect(replies.map((r) => r.senderId)).to.deep.equal([world.bot.id]);
      }
    });

    it('a handler that keeps failing is run maxHandlerAttempts times, reported, and passed over; the next notification is handled', async () => {
      const repositoryId = world.repositories[0]!.repositoryId;
      const poison = (await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, 0))).message;
      const fine = (await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, 1))).message;
      const attempts = new Map<string, number>();
      const reported: string[] = [];
      const bot = runBot({
        baseUrl: stack.chat.url,
        token: botToken,
        client: new ChatClient({ baseUrl: stack.chat.url, token: botToken, fetch: recorder.fetch }),
        repositories: [repositoryId],
        stopSignals: [],
        maxHandlerAttempts: 3,
        handlerRetryDelayMs: 10,
        onHandlerError: (_error, notification) => reported.push(notification.messageId),
        logger: {},
        async handler({ message, reply }) {
          attempts.set(message.messageId, (attempts.get(message.messageId) ?? 0) + 1);
          if (message.messageId === poison.messageId) throw new Error('poison');
          await reply('ok');
        },
      });
      await until(async () => (attempts.get(fine.messageId) ? true : undefined), 'the second notification');
      await bot.stop();
      expect(attempts.get(poison.messageId)).to.equal(3);
      expect(reported).to.deep.equal([poison.messageId]);
      const inbox = await inboxOf(repositoryId);
      expect(inbox.checkpoint).to.equal(inbox.items[1]!.cursor);
    });

    it('an acknowledgement that finds the checkpoint moved by someone else (INBOX_CHECKPOINT_STALE) reads it again and goes on', async () => {
      const repositoryId = world.repositories[0]!.repositoryId;
      for (let i = 0; i < 6; i += 1) await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, i));
      const ready = await until(async () => ((await inboxOf(repositoryId)).items.length === 6 ? true : undefined), '6 notifications');
      expect(ready).to.equal(true);
      let handled = 0;
      const bot = runBot({
        baseUrl: stack.chat.url,
        token: botToken,
        client: new ChatClient({ baseUrl: stack.chat.url, token: botToken, fetch: recorder.fetch }),
        repositories: [repositoryId],
        stopSignals: [],
        ackEvery: 1000,
        ackIntervalMs: 60_000,
        async handler({ reply }) {
          // Another consumer of the same inbox acknowledges through the third notification meanwhile.
          if (++handled === 4) {
            const third = (await inboxOf(repositoryId)).items[2]!;
            await botClient.acknowledgeRepositoryInbox(repositoryId, { throughCursor: third.cursor, expectedCursor: null });
          }
          await reply('ok');
        },
      });
      await until(async () => (handled === 6 ? true : undefined), 'six handled');
      await bot.stop();
      const inbox = await inboxOf(repositoryId);
      expect(inbox.checkpoint).to.equal(inbox.items[5]!.cursor);
    });

    it('a token that expires under a running bot is renewed through its token function, and the bot carries on', async () => {
      const repositoryId = world.repositories[0]!.repositoryId;
      const mint = (expiresInSeconds: number) => stack.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds });
      let current = await mint(4);
      const asked: boolean[] = [];
      const handled: string[] = [];
      const bot = runBot({
        baseUrl: stack.chat.url,
        token: async ({ forceRefresh }) => {
          asked.push(forceRefresh);
          if (forceRefresh) current = await mint(3600);
          return current;
        },
        repositories: [repositoryId],
        stopSignals: [],
        logger: {},
        async handler({ message, reply }) {
          handled.push(message.messageId);
          await reply(`re ${message.messageId}`);
        },
      });
      const first = (await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, 0))).message;
      await until(async () => (handled.includes(first.messageId) ? true : undefined), 'the mention made while the first token is valid');
      await sleep(5_000);
      const second = (await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, 1))).message;
      await until(async () => (handled.includes(second.messageId) ? true : undefined), 'the mention made after the first token expired');
      await bot.stop();
      await bot.done;
      expect(asked).to.include(true);
      const inbox = await inboxOf(repositoryId);
      expect(inbox.checkpoint).to.equal(inbox.items[1]!.cursor);
    });

    it('a refused token: done rejects with ChatTokenRejectedError saying what to do (a function asked once more, a fixed token at once)', async () => {
      const repositoryId = world.repositories[0]!.repositoryId;
      const expired = await stack.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds: -60 });
      const options = { baseUrl: stack.chat.url, repositories: [repositoryId], stopSignals: [], logger: {}, handler: () => undefined };
      const fixed = await runBot({ ...options, token: expired }).done.catch((e: unknown) => e);
      expect(fixed).to.be.instanceOf(ChatTokenRejectedError).and.include({ code: 'TOKEN_REJECTED', status: 401, renewable: false, baseUrl: stack.chat.url });
      expect((fixed as Error).message).to.contain('a fixed token cannot be renewed');
      const asked: boolean[] = [];
      const renewing = await runBot({ ...options, token: ({ forceRefresh }) => (asked.push(forceRefresh), expired) }).done.catch((e: unknown) => e);
      expect(renewing).to.be.instanceOf(ChatTokenRejectedError).and.include({ renewable: true });
      expect(asked).to.deep.equal([false, true]);
    });

    it('a token refused while a handler replies stops the bot with the notification unacknowledged, instead of passing it over', async () => {
      const repositoryId = world.repositories[1]!.repositoryId;
      const mention = (await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, 0))).message;
      let refused = false;
      const runs: string[] = [];
      const bot = runBot({
        baseUrl: stack.chat.url,
        token: () => (refused ? 'not.a.token' : botToken),
        repositories: [repositoryId],
        stopSignals: [],
        logger: {},
        handlerRetryDelayMs: 10,
        async handler({ message, reply }) {
          runs.push(message.messageId);
          refused = true;
          await reply('never stored');
        },
      });
      const failure = await bot.done.catch((e: unknown) => e);
      expect(failure).to.be.instanceOf(ChatTokenRejectedError);
      expect(runs).to.deep.equal([mention.messageId]);
      expect((await inboxOf(repositoryId)).checkpoint).to.equal(null);
    });

    it('SIGTERM while a handler is in hand: the handler finishes, the checkpoint is acknowledged through it, exit code 0', async () => {
      const repositoryId = world.repositories[1]!.repositoryId;
      const message = (await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, 0))).message;
      const bot = new ChildService({
        name: `sigterm-bot-${mode}`,
        script: 'tests/clients/crash-bot.ts',
        env: { CHAT_URL: stack.chat.url, CHAT_TOKEN: botToken, BOT_REPOSITORIES: repositoryId, BOT_HANDLER_DELAY_MS: '1500', BOT_MAX_PAUSE_MS: '0' },
      });
      try {
        await bot.waitForOutput(/^handling /m, 60_000);
        bot.process.kill('SIGTERM');
        await bot.stop(30_000);
        expect(bot.process.exitCode, bot.log).to.equal(0);
        expect(bot.log).to.match(/^handled \S+ \S+ -?\d+ \d+ created$/m).and.contain('stopped');
        const inbox = await inboxOf(repositoryId);
        expect(inbox.items).to.have.length(1);
        expect(inbox.checkpoint).to.equal(inbox.items[0]!.cursor);
        const replies: MessageResponse[] = [];
        for await (const m of writer.roomMessages({ repositoryId })) if (m.senderId === world.bot.id) replies.push(m);
        expect(replies.map((r) => r.bodyMarkdown)).to.deep.equal([`re ${message.messageId}`]);
      } finally {
        await bot.stop();
      }
    });
  });
}
