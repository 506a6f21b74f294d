import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { replyIdempotencyKey, runBot } from '@chat/bot';
import { ChatClient, ChatWebhookVerificationError, MemoryDeliveryIdStore, verifyWebhook, type AppendMessageRequest, type RoomRef } from '@chat/client';
import { buildBotWorld, mentionBody, type BotWorld } from '../clients/bot-world.ts';
import type { BenchCluster } from './bench-cluster.ts';
import { CpuMeter } from './proc-stats.ts';
import { round } from './stats.ts';
import { serverProcesses } from './stream-rooms.ts';
import type { StreamScenario } from './stream-scenarios.ts';
import { zipfPicker } from '../harness/zipf.ts';

export interface BotThroughputOptions {
  /** Repositories the bot holds grants on. */
  repositories: number;
  /** Mentions waiting in the inboxes when the bot starts. */
  mentions: number;
  /**
   * `list`: the repositories are listed to runBot (one ordered worker and one inbox stream each);
   * `feed`: none are, and runBot follows the bot's feed (every granted repository on one stream);
   * `webhook`: the bot registers a webhook and answers each signed delivery in an HTTP handler.
   */
  follow: 'list' | 'feed' | 'webhook';
  /** Mentions spread Zipf-like (a few busy repositories, a long tail) instead of round robin. */
  zipf?: boolean;
  /**
   * Whether the handler replies to each mention (an append, 201, under a key from the notification
   * or delivery ID), or only records it (its notification ID, or its delivery ID verified). Without
   * the reply the figure is the service's delivery of mentions to a bot; with it, a bot's whole day,
   * which also spends an append per mention.
   */
  reply: boolean;
  /**
   * By webhook only: the mentions are appended and fanned out while the receiver holds its answers
   * (the lanes' first POSTs wait unanswered), and the clock runs from the release until every mention
   * is handled: a backlog delivered, as the stream figures measure one. Without it, mentions are
   * appended while the webhook delivers them, and the clock runs from the first append.
   */
  waiting?: boolean;
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
  /** CPU the service's processes used per handled mention while the bot ran (its notification read, message lookup and reply), in ms. */
  serviceCpuMsPerMention: number;
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
async function waitForNotifications(client: ChatClient, world: BotWorld, total: number, follow: 'list' | 'feed' | 'webhook'): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    let count = 0;
    if (follow === 'feed') for await (const _ of client.principalInboxNotifications({ pageSize: 200 })) count += 1;
    else for (const { repositoryId } of world.repositories) for await (const _ of client.inboxNotifications({ repositoryId })) count += 1;
    if (count >= total) return;
    if (Date.now() > deadline) throw new Error(`only ${count} of ${total} notifications were made within 300 s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Bot throughput, end to end: `mentions` mentions of one bot wait in the inboxes of `repositories`
 * repositories; one bot (runBot, in this process) starts, and the clock runs from its start until it
 * has handled every notification (found its message, and with `reply` had its reply committed, 201)
 * and its stop has acknowledged every checkpoint (or the feed's) through the last notification.
 */
export async function measureBotThroughput(cluster: BenchCluster, options: BotThroughputOptions): Promise<BotThroughputResult> {
  if (options.follow === 'webhook') return measureWebhookThroughput(cluster, options);
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
  const pick = options.zipf ? zipfPicker(world.repositories.length) : (i: number) => i % world.repositories.length;
  await appendAll(writer, options.mentions, 32, (i) => ({ room: { repositoryId: world.repositories[pick(i)]!.repositoryId }, body: mentionBody(world.bot.id, i) }));
  const token = await cluster.core.mintToken({ type: 'bot', subjectId: world.bot.id, credentialId: world.bot.credentialId, expiresInSeconds: 3600 });
  const client = new ChatClient({ baseUrl: cluster.apiUrls[0]!, token, fetch: routingFetch(cluster) });
  await waitForNotifications(client, world, options.mentions, options.follow);
  // What the service takes from as many writers as the bot has workers, on the machine as it is now
  // (with the notifier done), into the branch rooms, which the bot does not read.
  const appendReference = await appendAll(writer, Math.min(options.mentions, 1000), Math.min(options.repositories, 32), (i) => {
    const repository = world.repositories[i % world.repositories.length]!;
    return { room: { repositoryId: repository.repositoryId, branchId: repository.branchId }, body: { bodyMarkdown: `reference ${i}` } };
  });

  let handled = 0;
  let created = 0;
  const seen = new Set<string>();
  let allHandled: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allHandled = resolve));
  const meter = new CpuMeter(serverProcesses(cluster));
  await meter.start();
  const started = performance.now();
  const bot = runBot({
    baseUrl: cluster.apiUrls[0]!,
    token,
    client,
    ...(options.follow === 'list' ? { repositories: world.repositories.map((r) => r.repositoryId) } : { concurrency: 16 }),
    stopSignals: [],
    async handler({ notification, message, reply }) {
      if (options.reply) {
        const result = await reply(`re ${message.messageId}`);
        if (result.created) created += 1;
      } else if (seen.has(notification.notificationId)) return;
      seen.add(notification.notificationId);
      if (seen.size === options.mentions) allHandled();
      handled = seen.size;
    },
  });
  await Promise.race([finished, bot.done]);
  await bot.stop();
  const seconds = (performance.now() - started) / 1000;
  const cores = await meter.stop();
  await bot.done;
  const serviceCpuMsPerMention = (Object.values(cores).reduce((a, b) => a + b, 0) * seconds * 1000) / Math.max(handled, 1);

  let checkpointsOnLast = 0;
  if (options.follow === 'feed') {
    // The feed's checkpoint is on its last position, and every repository inbox's on its last notification.
    let end: string | null = null;
    for (let cursor: string | null = null; ; ) {
      const page = await client.listPrincipalInbox({ cursor, limit: 200 });
      if (page.items.length === 0) break;
      end = cursor = page.nextCursor ?? null;
    }
    const feedOnLast = end !== null && (await client.listPrincipalInbox({ limit: 1 })).acknowledgedCursor === end;
    if (!feedOnLast) return { mentions: handled, seconds, perSecond: handled / seconds, created, checkpointsOnLast: 0, appendReference, serviceCpuMsPerMention };
  }
  for (const { repositoryId } of world.repositories) {
    let last: string | undefined;
    for await (const n of client.inboxNotifications({ repositoryId })) last = n.cursor;
    const page = await client.listRepositoryInbox(repositoryId, { limit: 1 });
    if (last === undefined || page.acknowledgedCursor === last) checkpointsOnLast += 1;
  }
  return { mentions: handled, seconds, perSecond: handled / seconds, created, checkpointsOnLast, appendReference, serviceCpuMsPerMention };
}

/** Adds the bot world's repositories and bots to core's fixture; resolves with the world and a client factory. */
async function addBotWorld(cluster: BenchCluster, repositories: number) {
  const { world, fixture } = buildBotWorld(repositories);
  const current = (await cluster.core.getFixture()) as typeof fixture;
  await cluster.core.putFixture({
    users: [...current.users, ...fixture.users],
    organizations: [...current.organizations, ...fixture.organizations],
    repositories: [...current.repositories, ...fixture.repositories],
    bots: [...current.bots, ...fixture.bots],
  });
  const clientOf = async (subject: { id: string; credentialId: string }) => {
    const token = await cluster.core.mintToken({ type: 'bot', subjectId: subject.id, credentialId: subject.credentialId, expiresInSeconds: 3600 });
    return new ChatClient({ baseUrl: cluster.apiUrls[0]!, token, fetch: routingFetch(cluster) });
  };
  return { world, clientOf };
}

/**
 * Bot throughput by webhook: the bot registers a webhook served by an HTTP handler in this process
 * (each delivery verified, its delivery ID recorded, and with `reply` answered with one reply under a
 * key from its delivery ID), and 32 writers append `mentions` mentions as fast as the service takes
 * them. Without `waiting`, the clock runs from the first append until every mention is handled; with
 * it, the handler holds every POST until all the mentions' notifications are written, and the clock
 * runs from its release.
 */
async function measureWebhookThroughput(cluster: BenchCluster, options: BotThroughputOptions): Promise<BotThroughputResult> {
  const { world, clientOf } = await addBotWorld(cluster, options.repositories);
  const writer = await clientOf(world.writer);
  const client = await clientOf(world.bot);
  const secret = `bench-webhook-secret-${Date.now()}`;
  const deliveries = new MemoryDeliveryIdStore({ maxEntries: options.mentions * 2 });
  let handled = 0;
  let created = 0;
  let allHandled: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allHandled = resolve));
  let release: () => void = () => undefined;
  const released = options.waiting ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await released;
    try {
      const { deliveryId, notification } = await verifyWebhook({ headers: req.headers, body: Buffer.concat(chunks) }, { secret, deliveries });
      const room = notification.branchId ? { repositoryId: notification.repositoryId, branchId: notification.branchId } : { repositoryId: notification.repositoryId };
      try {
        if (options.reply) {
          const result = await client.appendMessage(room, { bodyMarkdown: `re ${notification.messageId}` }, { idempotencyKey: await replyIdempotencyKey(deliveryId, 0) });
          if (result.created) created += 1;
        }
        if (++handled === options.mentions) allHandled();
        res.writeHead(200).end();
      } catch {
        await deliveries.release(deliveryId);
        res.writeHead(503).end();
      }
    } catch (err) {
      res.writeHead(err instanceof ChatWebhookVerificationError && err.reason === 'replayed' ? 200 : 401).end();
    }
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { webhook } = await client.createWebhook({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret });
  const pick = options.zipf ? zipfPicker(world.repositories.length) : (i: number) => i % world.repositories.length;
  const meter = new CpuMeter(serverProcesses(cluster));
  let started = performance.now();
  if (!options.waiting) await meter.start();
  const appendReference = await appendAll(writer, options.mentions, 32, (i) => ({ room: { repositoryId: world.repositories[pick(i)]!.repositoryId }, body: mentionBody(world.bot.id, i) }));
  if (options.waiting) {
    await waitForNotifications(client, world, options.mentions, 'feed');
    await meter.start();
    started = performance.now();
    release();
  }
  await Promise.race([finished, new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${handled} of ${options.mentions} deliveries handled within 600 s`)), 600_000).unref())]);
  const seconds = (performance.now() - started) / 1000;
  const cores = await meter.stop();
  const serviceCpuMsPerMention = (Object.values(cores).reduce((a, b) => a + b, 0) * seconds * 1000) / Math.max(handled, 1);
  await client.deleteWebhook(webhook.webhookId);
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  return { mentions: handled, seconds, perSecond: handled / seconds, created, checkpointsOnLast: 0, appendReference, serviceCpuMsPerMention };
}

/**
 * `pnpm bench --only bot`: one bot on 1,000 repositories, mentions spread Zipf-like, by its feed
 * and by webhook, each with 20,000 waiting mentions (4,000 with `--quick`); by webhook also with as
 * many appended while it runs. Each way with waiting mentions is measured twice: with a handler that records each mention once (the service's delivery
 * of mentions to a bot, the target) and with one that also replies to each (an append per
 * mention, so bounded by the machine's append rate, which the note gives). For comparison, the bot
 * with 16 repositories listed (4,000 round robin; 800 with `--quick`), replying.
 */
export const botThroughputScenario: StreamScenario = {
  key: 'bot',
  async run(cluster, { quick }) {
    const figures = [];
    const fleet = quick ? 4000 : 20_000;
    for (const options of [
      { follow: 'feed', repositories: 1000, mentions: fleet, zipf: true, reply: false, target: '≥ 1,000/s' },
      { follow: 'feed', repositories: 1000, mentions: fleet, zipf: true, reply: true, target: '—' },
      { follow: 'webhook', repositories: 1000, mentions: fleet, zipf: true, reply: false, waiting: true, target: '≥ 500/s' },
      { follow: 'webhook', repositories: 1000, mentions: fleet, zipf: true, reply: true, waiting: true, target: '—' },
      { follow: 'webhook', repositories: 1000, mentions: fleet, zipf: true, reply: false, waiting: false, target: '—' },
      { follow: 'list', repositories: 16, mentions: quick ? 800 : 4000, zipf: false, reply: true, target: '≥ 500/s' },
    ] as const) {
      const result = await measureBotThroughput(cluster, options);
      const handling = options.reply ? 'each mention answered with a reply (201)' : 'each mention recorded once by its handler';
      if (options.follow === 'webhook') {
        const when = options.waiting
          ? `${options.mentions.toLocaleString('en-US')} mentions waiting (fanned out while the receiver held its answers), ${handling} (release to last handled)`
          : `mentions appended by 32 writers while it runs, ${handling} (first append to last handled)`;
        const cost = options.waiting ? `delivery${options.reply ? ' and the reply' : ''}` : "the mention's append, its fanout and delivery";
        figures.push({
          name: `bot throughput by webhook, one HTTP handler for ${options.repositories} repositories, mentions Zipf-like, ${when}`,
          value: `${Math.round(result.perSecond).toLocaleString('en-US')} mentions/s`,
          target: options.target,
          note:
            `${result.mentions} mentions in ${round(result.seconds, 2)} s, ${result.created} replies created; the writers appended at ${Math.round(result.appendReference).toLocaleString('en-US')}/s; ` +
            `service CPU ${round(result.serviceCpuMsPerMention, 2)} ms per delivered notification (${cost})`,
        });
        continue;
      }
      const how = options.follow === 'feed' ? `its feed (one stream) over ${options.repositories} repositories, mentions Zipf-like` : `${options.repositories} listed repositories (a stream each)`;
      figures.push({
        name: `bot throughput by stream, one runBot process following ${how}, ${handling} (notification in with its message, handled, checkpoint acknowledged)`,
        value: `${Math.round(result.perSecond).toLocaleString('en-US')} mentions/s`,
        target: options.target,
        note:
          `${result.mentions} mentions in ${round(result.seconds, 2)} s, ${result.created} replies created, ${result.checkpointsOnLast}/${options.repositories} checkpoints on the last notification` +
          `${options.follow === 'feed' ? " (and the feed's)" : ''}; service CPU ${round(result.serviceCpuMsPerMention, 2)} ms per mention handled; ` +
          `plain appends by ${Math.min(options.repositories, 32)} concurrent writers before the bot started: ${Math.round(result.appendReference).toLocaleString('en-US')}/s`,
      });
    }
    return figures;
  },
};
