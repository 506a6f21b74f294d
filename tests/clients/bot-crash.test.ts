import { expect } from 'chai';
import { once } from 'node:events';
import type { InboxPageResponse, MessagePageResponse, MessageResponse, NotificationResponse } from '@chat/contracts';
import type { ApiResponse } from '../harness/api-client.ts';
import { ChildService } from '../harness/child-service.ts';
import { expectStatus } from '../harness/assertions.ts';
import { residentBytes } from '../harness/gateway-cluster.ts';
import { clientConnections } from '../harness/process-sockets.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';
import { buildBotWorld, mentionBody, type BotWorld } from './bot-world.ts';

const MENTIONS = 500;
/**
 * How the bot learns its repositories: listed (an inbox stream each), or not (its feed: every
 * repository where it holds a grant, in one stream; more of them than the per-principal cap on
 * inbox streams allows one by one).
 */
const FOLLOWS = [
  { follow: 'list', repositories: 3 },
  { follow: 'feed', repositories: 80 },
] as const;
/** What a bot following its feed may hold at once (runBot's default `maxConnections`), its stream included. */
const FEED_MAX_CONNECTIONS = 4;
/** The bot process's resident memory ceiling. */
const FEED_MAX_RSS_BYTES = 150 * 1024 * 1024;

/** Samples a running bot's connections to the service and its memory until stopped; the highest of each. */
function watchBot(bot: ChildService, port: number): { stop(): { connections: number; rssBytes: number } } {
  const peak = { connections: 0, rssBytes: 0 };
  let running = true;
  void (async () => {
    while (running && !bot.hasExited) {
      const [connections, rss] = await Promise.all([clientConnections(bot.pid!, port), residentBytes(bot.pid!).catch(() => 0)]);
      peak.connections = Math.max(peak.connections, connections);
      peak.rssBytes = Math.max(peak.rssBytes, rss);
      await sleep(100);
    }
  })();
  return {
    stop() {
      running = false;
      return peak;
    },
  };
}
/** Kills of a bot that had handled something, while the mentions arrive and after, before the last, undisturbed run. */
const MIN_KILLS = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every message of a room, oldest first, through the validating client. */
async function listAll(stack: Stack, scope: { repositoryId: string; branchId?: string }, token: string): Promise<MessageResponse[]> {
  const all: MessageResponse[] = [];
  let cursor: string | null = null;
  do {
    const page: ApiResponse<MessagePageResponse> = await stack.api.list<MessagePageResponse>(scope, token, `limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    expectStatus(page, 200);
    all.push(...page.body.items);
    cursor = page.body.nextCursor ?? null;
  } while (cursor);
  return all;
}

/** The bot's whole inbox in a repository and its checkpoint. */
async function inboxOf(stack: Stack, repositoryId: string, token: string): Promise<{ items: NotificationResponse[]; acknowledgedCursor: string | null }> {
  const items: NotificationResponse[] = [];
  let cursor: string | null = null;
  let acknowledgedCursor: string | null = null;
  do {
    const page: ApiResponse<InboxPageResponse> = await stack.api.send<InboxPageResponse>({ method: 'GET', path: `/v1/repositories/${repositoryId}/inbox?limit=200${cursor ? `&cursor=${cursor}` : ''}`, headers: { authorization: `Bearer ${token}` } });
    expectStatus(page, 200);
    items.push(...page.body.items);
    acknowledgedCursor = page.body.acknowledgedCursor ?? null;
    cursor = page.body.nextCursor ?? null;
  } while (cursor);
  return { items, acknowledgedCursor };
}

function startBot(stack: Stack, world: BotWorld, token: string, name: string, follow: 'list' | 'feed'): ChildService {
  return new ChildService({
    name,
    script: 'tests/clients/crash-bot.ts',
    env: {
      CHAT_URL: stack.chat.url,
      CHAT_TOKEN: token,
      ...(follow === 'list' ? { BOT_REPOSITORIES: world.repositories.map((r) => r.repositoryId).join(',') } : {}),
      BOT_ACK_EVERY: '20',
      BOT_MAX_PAUSE_MS: '5',
    },
  });
}

for (const mode of MODES) for (const { follow, repositories: REPOSITORIES } of FOLLOWS) {
  describe(`[${mode}] bot runner (${follow}): SIGKILLed again and again while mentions arrive`, function () {
    this.timeout(600_000);

    it(`every one of ${MENTIONS} mentions across ${REPOSITORIES} repositories gets exactly one reply, and the checkpoint ends on the last notification`, async () => {
      const stack = await sharedStack(mode);
      const { world, fixture } = buildBotWorld(REPOSITORIES);
      await stack.fixture.add(fixture);
      const writerToken = await stack.core.mintToken({ type: 'bot', subjectId: world.writer.id, credentialId: world.writer.credentialId, expiresInSeconds: 3600 });
      const botToken = await stack.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds: 3600 });

      // Mentions arrive from 4 writers at once, a quarter of them in branch rooms.
      const mentions: Array<{ scope: { repositoryId: string; branchId?: string }; message: MessageResponse }> = [];
      let next = 0;
      const writing = Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < MENTIONS) {
            const i = next++;
            const repository = world.repositories[i % REPOSITORIES]!;
            const scope = i % 4 === 3 ? { repositoryId: repository.repositoryId, branchId: repository.branchId } : { repositoryId: repository.repositoryId };
            const res = await stack.api.append<MessageResponse>(scope, writerToken, mentionBody(world.bot.id, i));
            expectStatus(res, 201);
            mentions.push({ scope, message: res.body });
            await sleep(Math.random() * 300);
          }
        }),
      );
      let writingDone = false;
      void writing.then(() => (writingDone = true));

      // Start, let it run a random while, SIGKILL; again. One run in five is killed at a random moment
      // of its start; the others a random while after their first reply (or after 30 s without work).
      const port = Number(new URL(stack.chat.url).port);
      const peaks = { connections: 0, rssBytes: 0 };
      const recordPeak = (peak: { connections: number; rssBytes: number }) => {
        peaks.connections = Math.max(peaks.connections, peak.connections);
        peaks.rssBytes = Math.max(peaks.rssBytes, peak.rssBytes);
      };
      let kills = 0;
      let workingKills = 0;
      let runs = 0;
      let replays = 0;
      const replaysIn = (bot: ChildService) => (bot.log.match(/ replayed$/gm) ?? []).length;
      while (!writingDone || workingKills < MIN_KILLS) {
        const run = runs++;
        const bot = startBot(stack, world, botToken, `crash-bot-${mode}-${follow}-${run}`, follow);
        const watch = watchBot(bot, port);
        if (run % 5 === 0) await sleep(Math.random() * 1500);
        else {
          await bot.waitForOutput(/^handled /m, 30_000).catch(() => undefined);
          await sleep(Math.random() * 1500);
        }
        if (bot.hasExited) throw new Error(`the bot exited by itself:\n${bot.log}`);
        recordPeak(watch.stop());
        const exited = once(bot.process, 'exit');
        bot.process.kill('SIGKILL');
        await exited;
        kills += 1;
        if (/^handled /m.test(bot.log)) workingKills += 1;
        replays += replaysIn(bot);
      }
      await writing;

      // The last run is left alone until every mention has its reply and every checkpoint is on the last notification.
      const last = startBot(stack, world, botToken, `crash-bot-${mode}-${follow}-final`, follow);
      const lastWatch = watchBot(last, port);
      // Its stop signals are handled from here on: the earlier runs may have done all the work already.
      await last.waitForOutput(/^bot started$/m, 60_000);
      const rooms = world.repositories.flatMap((r) => [{ repositoryId: r.repositoryId }, { repositoryId: r.repositoryId, branchId: r.branchId }]);
      const deadline = Date.now() + 240_000;
      let replies: Map<string, number> = new Map();
      let inboxes: Array<{ items: NotificationResponse[]; acknowledgedCursor: string | null }> = [];
      for (;;) {
        replies = new Map();
        for (const room of rooms) {
          for (const message of await listAll(stack, room, writerToken)) {
            if (message.senderId !== world.bot.id) continue;
            const to = /^re (\S+)$/.exec(message.bodyMarkdown)?.[1] ?? `unexpected body ${message.bodyMarkdown}`;
            replies.set(to, (replies.get(to) ?? 0) + 1);
          }
        }
        inboxes = await Promise.all(world.repositories.map((r) => inboxOf(stack, r.repositoryId, botToken)));
        const settled = inboxes.every((inbox) => inbox.items.length > 0 && inbox.acknowledgedCursor === inbox.items[inbox.items.length - 1]!.cursor);
        if ((replies.size >= MENTIONS && settled) || Date.now() > deadline) break;
        if (last.hasExited) throw new Error(`the last bot run exited:\n${last.log}`);
        await sleep(1000);
      }
      recordPeak(lastWatch.stop());
      await last.stop(30_000);
      replays += replaysIn(last);

      const missing = mentions.filter((m) => !replies.has(m.message.messageId));
      const duplicated = [...replies].filter(([, n]) => n > 1);
      const unexpected = [...replies.keys()].filter((id) => !mentions.some((m) => m.message.messageId === id));
      expect({ missing: missing.length, duplicated: duplicated.length, unexpected }).to.deep.equal({ missing: 0, duplicated: 0, unexpected: [] });
      expect(inboxes.reduce((n, inbox) => n + inbox.items.length, 0)).to.equal(MENTIONS);
      for (const inbox of inboxes) expect(inbox.acknowledgedCursor).to.equal(inbox.items[inbox.items.length - 1]!.cursor);
      // Each reply is in the room of its mention (the branch room for branch-room mentions).
      for (const room of rooms) {
        const messages = await listAll(stack, room, writerToken);
        const ids = new Set(messages.map((m) => m.messageId));
        for (const reply of messages.filter((m) => m.senderId === world.bot.id)) expect(ids.has(reply.bodyMarkdown.slice(3))).to.equal(true);
      }

      // SIGTERM: the last run finished its work, acknowledged and exited 0.
      expect(last.process.exitCode, last.log).to.equal(0);
      expect(last.log).to.contain('stopped');
      // The kills hit handled-but-unacknowledged work: some replies were sent again and answered as replays.
      expect(workingKills).to.be.at.least(MIN_KILLS);
      expect(kills).to.be.at.least(workingKills);
      expect(replays, 'replies answered 200 (replayed) after a restart').to.be.greaterThan(0);
      if (follow === 'feed') {
        // One stream for every repository, and a few kept-alive connections for lookups and replies.
        expect(peaks.connections, 'connections to the service at once').to.be.within(1, FEED_MAX_CONNECTIONS);
        expect(peaks.rssBytes, 'the bot process\'s resident memory').to.be.below(FEED_MAX_RSS_BYTES);
      }
      process.stdout.write(`      (${follow}: at most ${peaks.connections} connections, ${Math.round(peaks.rssBytes / 1048576)} MB resident)\n`);
    });
  });
}
