import { runBot } from '@chat/bot';
import { ChatClient, type AppendMessageRequest, type RoomRef } from '@chat/client';
import { buildBotWorld, mentionBody, type BotWorld } from '../clients/bot-world.ts';
import type { BenchCluster } from './bench-cluster.ts';
import { round } from './stats.ts';
import type { StreamScenario } from './stream-scenarios.ts';

export interface BotThroughputOptions {
  /** Repositories the bot follows (one ordered worker each). */
  repositories: number;
  /** Mentions waiting in the inboxes when the bot starts. */
  mentions: number;
}

export interface BotThroughputResult {
  mentions: number;
  seconds: number;
  perSecond: number;
  /** Replies the API stored (201); the rest were replays of a reply already stored. */
  created: number;
  /** Repositories whose checkpoint ended on their last notification. */
  checkpointsOnLast: number;
  /** Plain appends per second by as many concurrent writers as the bot has workers, before it starts: about the bot's ceiling on the machine as it is. */
  appendReference: number;
}

/** A fetch that sends stream requests to the gateways and everything else to the APIs, in turn (the distributed shape's ingress). */
function routingFetch(cluster: BenchCluster): typeof fetch {
  let turn = 0;
  return (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const bases = url.pathname.endsWith('/events') ? cluster.gatewayUrls : cluster.apiUrls;
    const base = new URL(bases[turn++ % bases.length]!);
    url.host = base.host;
    return fetch(url, init);
  };
}

/** Appends `total` messages made by `nth(i)`, `writers` at a time; resolves with the rate. */
async function appendAll(
  writer: ChatClient,
  total: number,
  writers: number,
  nth: (i: number) => { room: RoomRef; body: AppendMessageRequest },
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < total) {
        const { room, body } = nth(next++);
        await writer.appendMessage(room, body);
      }
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

/** Waits until the notifier has made every mention's notification (the bot then starts on a full backlog). */
async function waitForNotifications(client: ChatClient, world: BotWorld, total: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    let count = 0;
    for (const { repositoryId } of world.repositories) for await (const _ of client.inboxNotifications({ repositoryId })) count += 1;
    if (count >= total) return;
    if (Date.now() > deadline) throw new Error(`only ${count} of ${total} notifications were made within 300 s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Bot throughput, end to end: `mentions` mentions of one bot wait in the inboxes of `repositories`
 * repositories; one bot (runBot, in this process) starts, and the clock runs from its start until it
 * has handled every notification (found its message, had its reply committed, 201) and its stop has
 * acknowledged every checkpoint through the last notification.
 */
export async function measureBotThroughput(cluster: BenchCluster, options: BotThroughputOptions): Promise<BotThroughputResult> {
  const { world, fixture } = buildBotWorld(options.repositories);
  const current = (await cluster.core.getFixture()) as typeof fixture;
  await cluster.core.putFixture({
    users: [...current.users, ...fixture.users],
    organizations: [...current.organizations, ...fixture.organizations],
    repositories: [...current.repositories, ...fixture.repositories],
    bots: [...current.bots, ...fixture.bots],
  });
  const writerToken = await cluster.core.mintToken({ type: 'bot', subjectId: world.writer.id, credentialId: world.writer.credentialId, expiresInSeconds: 3600 });
  const writer = new ChatClient({ baseUrl: cluster.apiUrls[0]!, token: writerToken, fetch: routingFetch(cluster) });
  await appendAll(writer, options.mentions, 32, (i) => ({ room: { repositoryId: world.repositories[i % world.repositories.length]!.repositoryId }, body: mentionBody(world.bot.id, i) }));
  const token = await cluster.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds: 3600 });
  const client = new ChatClient({ baseUrl: cluster.apiUrls[0]!, token, fetch: routingFetch(cluster) });
  await waitForNotifications(client, world, options.mentions);
  // What the service takes from as many writers as the bot has workers, on the machine as it is now
  // (with the notifier done), into the branch rooms, which the bot does not read.
  const appendReference = await appendAll(writer, Math.min(options.mentions, 1000), options.repositories, (i) => {
    const repository = world.repositories[i % world.repositories.length]!;
    return { room: { repositoryId: repository.repositoryId, branchId: repository.branchId }, body: { bodyMarkdown: `reference ${i}` } };
  });

  let handled = 0;
  let created = 0;
  let allHandled: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allHandled = resolve));
  const started = performance.now();
  const bot = runBot({
    baseUrl: cluster.apiUrls[0]!,
    token,
    client,
    repositories: world.repositories.map((r) => r.repositoryId),
    stopSignals: [],
    async handler({ message, reply }) {
      const result = await reply(`re ${message.messageId}`);
      if (result.created) created += 1;
      if (++handled === options.mentions) allHandled();
    },
  });
  await Promise.race([finished, bot.done]);
  await bot.stop();
  const seconds = (performance.now() - started) / 1000;
  await bot.done;

  let checkpointsOnLast = 0;
  for (const { repositoryId } of world.repositories) {
    let last: string | undefined;
    for await (const n of client.inboxNotifications({ repositoryId })) last = n.cursor;
    const page = await client.listRepositoryInbox(repositoryId, { limit: 1 });
    if (last !== undefined && page.acknowledgedCursor === last) checkpointsOnLast += 1;
  }
  return { mentions: handled, seconds, perSecond: handled / seconds, created, checkpointsOnLast, appendReference };
}

/** `pnpm bench --only bot`: 4,000 waiting mentions over 16 repositories (800 with `--quick`). */
export const botThroughputScenario: StreamScenario = {
  key: 'bot',
  async run(cluster, { quick }) {
    const repositories = 16;
    const result = await measureBotThroughput(cluster, { repositories, mentions: quick ? 800 : 4000 });
    return [
      {
        name: `bot throughput, one runBot process over ${repositories} repositories (notification in, reply committed, checkpoint acknowledged)`,
        value: `${Math.round(result.perSecond).toLocaleString('en-US')} mentions/s`,
        target: '≥ 500/s',
        note:
          `${result.mentions} mentions in ${round(result.seconds, 2)} s, ${result.created} replies created, ${result.checkpointsOnLast}/${repositories} checkpoints on the last notification; ` +
          `plain appends by ${repositories} concurrent writers before the bot started: ${Math.round(result.appendReference).toLocaleString('en-US')}/s`,
      },
    ];
  },
};
