import { expect } from 'chai';
import { runBot, type BotHandle } from '@chat/bot';
import { ChatClient, type NotificationResponse } from '@chat/client';
import type { MessageResponse } from '@chat/contracts';
import { MODES, startStack, type Stack } from '../harness/stacks.ts';
import { buildBotWorld, mentionBody, type BotWorld } from './bot-world.ts';
import { FetchRecorder } from './sdk-fetch-recorder.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** More repositories than the per-principal cap on inbox streams (64 by default) lets a bot follow one by one. */
const REPOSITORIES = 70;
/** The gateway's live recheck of an open stream's authority. */
const RECHECK_MS = 1000;

for (const mode of MODES) {
  describe(`[${mode}] bot runner following its feed (no repository list)`, function () {
    this.timeout(240_000);
    let stack: Stack;
    let world: BotWorld;
    let writer: ChatClient;
    let recorder: FetchRecorder;
    let bot: BotHandle | undefined;
    const handled: NotificationResponse[] = [];

    before(async () => {
      stack = await startStack(mode, { GATEWAY_RECHECK_MS: String(RECHECK_MS), APPEND_RATE_LIMIT: '1000000' });
      const built = buildBotWorld(REPOSITORIES);
      world = built.world;
      await stack.fixture.add(built.fixture);
      const writerToken = await stack.core.mintToken({ type: 'bot', subjectId: world.writer.id, credentialId: world.writer.credentialId, expiresInSeconds: 3600 });
      writer = new ChatClient({ baseUrl: stack.chat.url, token: writerToken });
    });

    after(async () => {
      await bot?.stop();
      await stack?.stop();
    });

    afterEach(() => {
      expect(recorder.violations).to.deep.equal([]);
    });

    const post = async (repositoryId: string, i: number, branchId?: string) =>
      (await writer.appendMessage(branchId ? { repositoryId, branchId } : { repositoryId }, mentionBody(world.bot.id, i))).message;

    it('handles the mentions of every granted repository through one stream, a repository\'s in order, each once', async () => {
      recorder = new FetchRecorder();
      const botToken = await stack.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds: 3600 });
      const replies = new Map<string, number>();
      bot = runBot({
        baseUrl: stack.chat.url,
        token: botToken,
        client: new ChatClient({ baseUrl: stack.chat.url, token: botToken, fetch: recorder.fetch }),
        stopSignals: [],
        concurrency: 4,
        async handler({ notification, message, reply }) {
          handled.push(notification);
          replies.set(message.messageId, (replies.get(message.messageId) ?? 0) + 1);
          await reply(`re ${message.messageId}`);
        },
      });
      const posted: MessageResponse[] = [];
      // Three mentions in each repository, one of them in its branch room, from writers working at once.
      await Promise.all(
        world.repositories.map(async ({ repositoryId, branchId }, r) => {
          for (let k = 0; k < 3; k++) posted.push(await post(repositoryId, r * 3 + k, k === 1 ? branchId : undefined));
        }),
      );
      await until(() => (handled.length >= posted.length ? true : undefined), `${posted.length} handled notifications`);
      await sleep(500);
      expect(handled).to.have.length(posted.length);
      expect([...replies.values()].every((n) => n === 1)).to.equal(true);
      expect(new Set(handled.map((n) => n.messageId))).to.deep.equal(new Set(posted.map((m) => m.messageId)));
      // Per repository, notifications were handed over in inbox order (rooms are fanned out apart, so
      // a branch room's mention may take its inbox place before an earlier one of the repository room).
      const botClient = new ChatClient({ baseUrl: stack.chat.url, token: botToken, fetch: recorder.fetch });
      for (const { repositoryId } of world.repositories) {
        const inboxOrder: string[] = [];
        for await (const n of botClient.inboxNotifications({ repositoryId })) inboxOrder.push(n.notificationId);
        expect(handled.filter((n) => n.repositoryId === repositoryId).map((n) => n.notificationId)).to.deep.equal(inboxOrder);
      }
      // One stream for every repository: no repository inbox stream, one feed stream.
      expect(recorder.calls.filter((c) => /\/v1\/repositories\/[^/]+\/inbox\/events/.test(c.path))).to.deep.equal([]);
      expect(recorder.to('GET', '/v1/inbox/events')).to.have.length(1);
    });

    it('withholds a repository whose grant is revoked, goes on with the others, and picks up a grant added while it runs', async () => {
      const [revoked, kept] = [world.repositories[0]!, world.repositories[1]!];
      const handledOf = (message: MessageResponse) => handled.some((n) => n.messageId === message.messageId);
      const botToken = await stack.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds: 3600 });
      const start = () =>
        runBot({
          baseUrl: stack.chat.url,
          token: botToken,
          client: new ChatClient({ baseUrl: stack.chat.url, token: botToken, fetch: recorder.fetch }),
          stopSignals: [],
          async handler({ notification, message, reply }) {
            handled.push(notification);
            await reply(`re ${message.messageId}`);
          },
        });

      // Mentions wait while the bot is down; then it loses its grant on one of the two repositories.
      await bot!.stop();
      const withheld = await post(revoked.repositoryId, 10_000);
      const delivered = await post(kept.repositoryId, 10_001);
      await stack.fixture.updateBots((bots) => {
        for (const grant of bots.find((b) => b.id === world.bot.id)!.grants) if (grant.repositoryId === revoked.repositoryId) grant.state = 'revoked';
      });
      bot = start();
      await until(() => (handledOf(delivered) ? true : undefined), "the kept repository's mention");
      await sleep(RECHECK_MS * 2);
      expect(handledOf(withheld), 'a mention in a repository the bot may no longer read').to.equal(false);

      // A repository the bot is installed on while it runs: no restart, no list to change.
      const { world: other, fixture } = buildBotWorld(1);
      const fresh = other.repositories[0]!;
      await stack.fixture.add({ ...fixture, bots: [] });
      await stack.fixture.updateBots((bots) => {
        for (const id of [world.writer.id, world.bot.id]) {
          bots.find((b) => b.id === id)!.grants.push({
            id: `g_${id}_fresh`,
            repositoryId: fresh.repositoryId,
            subject: { kind: 'organization', id: world.organizationId },
            capabilities: ['room:read', 'message:append'],
            state: 'active',
          });
        }
      });
      await sleep(RECHECK_MS * 2);
      const installed = await post(fresh.repositoryId, 10_003);
      await until(() => (handledOf(installed) ? true : undefined), 'the mention in a repository granted while the bot runs');
    });
  });
}
