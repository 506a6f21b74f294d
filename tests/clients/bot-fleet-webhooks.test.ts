import { expect } from 'chai';
import { join } from 'node:path';
import { ChatClient, type MessageResponse } from '@chat/client';
import { ChildService } from '../harness/child-service.ts';
import { freePort } from '../harness/free-port.ts';
import { seededRandom } from '../harness/seeded-random.ts';
import { testConfig } from '../harness/test-config.ts';
import { zipfPicker } from '../harness/zipf.ts';
import { buildBotWorld, mentionBody } from './bot-world.ts';
import { followHandled, sigkill as kill, sleep, type Handled } from './fleet-children.ts';
import { FLEET_DEPLOYMENTS, type FleetDeployment } from './fleet-deployments.ts';

/**
 * A bot fleet's day by webhook: one bot installed on 1,000 repositories receives its mentions as
 * signed POSTs while they arrive at a steady rate, spread Zipf-like. Its receiver is SIGKILLed and
 * restarted again and again, and answers 500 to every delivery of one repository; in the
 * distributed deployment one notifier and one API are SIGKILLed too. Every mention is delivered at
 * least once and answered exactly once (the reply's idempotency key is derived from the delivery
 * ID); the failing repository's mentions fill the dead-letter set while the others go on, and are
 * answered once redelivered. `FLEET_MENTIONS` sets the number of mentions (the full run is
 * 20,000; CI runs fewer).
 */
const REPOSITORIES = 1000;
const MENTIONS = Number(process.env.FLEET_MENTIONS ?? '1000');
const RATE = 80;
const RECEIVER_KILLS = 10;
/** Mentions of the repository whose deliveries all fail. */
const FAILING_MENTIONS = 3;
const SECRET = 'fleet-webhook-secret-0123456789';

/**
 * Retries quick enough for a test, and long enough that a receiver down for a few seconds, again and
 * again, is waited for: a delivery is dead after 10 failed attempts, about 20–40 s after its first.
 */
const ENV = {
  api: { APPEND_RATE_LIMIT: '1000000', WEBHOOK_ALLOW_LOOPBACK: 'true' },
  notifier: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_MAX_ATTEMPTS: '10', WEBHOOK_RETRY_BASE_MS: '250', WEBHOOK_RETRY_MAX_MS: '8000', WEBHOOK_TIMEOUT_MS: '5000' },
};

for (const deployment of FLEET_DEPLOYMENTS) {
  describe(`bot fleet by webhook, ${deployment.name}`, function () {
    this.timeout(900_000);
    let service: FleetDeployment;

    before(async () => {
      service = await deployment.start(ENV);
    });
    after(async () => {
      await service?.stop();
    });

    it(`one bot on ${REPOSITORIES} repositories, ${MENTIONS} Zipf-like mentions by webhook, its receiver SIGKILLed ${RECEIVER_KILLS} times and failing one repository: every mention answered once, the failing one's through the dead-letter set`, async () => {
      const seed = testConfig.concurrencySeed;
      const random = seededRandom(seed);
      const context = `seed ${seed} (rerun with CONCURRENCY_SEED=${seed})`;
      const { world, fixture } = buildBotWorld(REPOSITORIES);
      await service.fixture.add(fixture);
      const mint = (subject: { id: string; credentialId: string }) => service.core.mintToken({ type: 'bot', subjectId: subject.id, credentialId: subject.credentialId, expiresInSeconds: 3600 });
      const writer = new ChatClient({ baseUrl: service.url, token: await mint(world.writer) });
      const botToken = await mint(world.bot);
      const botClient = new ChatClient({ baseUrl: service.url, token: botToken });
      const failingRepository = world.repositories[REPOSITORIES - 1]!.repositoryId;

      const port = await freePort();
      const { webhook } = await botClient.createWebhook({ url: `http://127.0.0.1:${port}/hook`, secret: SECRET });
      const handled: Handled[] = [];
      const receivers: ChildService[] = [];
      const startReceiver = async (failing: string) => {
        const receiver = new ChildService({
          name: `fleet-receiver-${receivers.length}`,
          script: 'clients/fleet-webhook-receiver.mjs',
          compiled: { cwd: join(testConfig.repoRoot, 'tests') },
          env: { CHAT_URL: service.url, CHAT_TOKEN: botToken, WEBHOOK_SECRET: SECRET, PORT: String(port), FAIL_REPOSITORY: failing },
        });
        receivers.push(receiver);
        followHandled(receiver, (parsed) => handled.push(...parsed));
        await receiver.waitForOutput(/^receiver listening$/m, 30_000);
        return receiver;
      };
      const downs: Array<{ killed: number; up?: number }> = [];

      // The failing repository gets a few mentions, at known moments; the rest are drawn Zipf-like from the others.
      const pick = zipfPicker(REPOSITORIES - 1, random);
      const failingAt = new Set(Array.from({ length: FAILING_MENTIONS }, (_, k) => Math.floor(((k + 1) * MENTIONS) / (FAILING_MENTIONS + 2))));
      const mentions: Array<{ repositoryId: string; message: MessageResponse }> = [];
      const startedAt = Date.now();
      let next = 0;
      let receiver = await startReceiver(failingRepository);
      const writing = Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < MENTIONS) {
            const i = next++;
            const due = startedAt + (i * 1000) / RATE;
            if (due > Date.now()) await sleep(due - Date.now());
            const repositoryId = failingAt.has(i) ? failingRepository : world.repositories[pick()]!.repositoryId;
            mentions.push({ repositoryId, message: (await writer.appendMessage({ repositoryId }, mentionBody(world.bot.id, i))).message });
          }
        }),
      );

      // Kills at random moments while the mentions come, at least a few seconds apart: the receiver
      // (down for a second or two each time), and in the distributed shape one notifier and one API,
      // never restarted.
      const writingMs = (MENTIONS * 1000) / RATE;
      const killsDone = (async () => {
        for (let k = 0; k < RECEIVER_KILLS; k++) {
          await sleep(Math.max(writingMs / (RECEIVER_KILLS + 1), 5000) * (0.6 + 0.8 * random()));
          if (k === 3 && service.processes) await kill(service.processes.notifiers[0]!.service);
          if (k === 6 && service.processes) await kill(service.processes.apis[0]!.service);
          await kill(receiver);
          const down: { killed: number; up?: number } = { killed: Date.now() };
          downs.push(down);
          await sleep(200 + random() * 1300);
          receiver = await startReceiver(failingRepository);
          down.up = Date.now();
        }
      })();
      await Promise.all([writing, killsDone]);

      // Every mention of the other repositories is answered; the failing one's are all dead letters.
      const replyCounts = async () => {
        const replies = new Map<string, number>();
        for (const repositoryId of new Set(mentions.map((m) => m.repositoryId))) {
          for await (const message of writer.roomMessages({ repositoryId, pageSize: 200 })) {
            if (message.senderId !== world.bot.id) continue;
            const to = /^re (\S+)$/.exec(message.bodyMarkdown)?.[1] ?? `unexpected ${message.bodyMarkdown}`;
            replies.set(to, (replies.get(to) ?? 0) + 1);
          }
        }
        return replies;
      };
      const deadLetters = async () => {
        const letters: Array<{ deliveryId: string; repositoryId: string; messageId: string; lastError: string; deadAt: string; createdAt: string }> = [];
        for (let cursor: string | null = null; ; ) {
          const page = await botClient.listWebhookDeadLetters(webhook.webhookId, { cursor, limit: 200 });
          letters.push(...page.items.map((l) => ({ deliveryId: l.deliveryId, repositoryId: l.notification.repositoryId, messageId: l.notification.messageId, lastError: l.lastError, deadAt: l.deadAt, createdAt: l.notification.createdAt })));
          if (!page.nextCursor) return letters;
          cursor = page.nextCursor;
        }
      };
      const healthy = mentions.filter((m) => m.repositoryId !== failingRepository);
      const failing = mentions.filter((m) => m.repositoryId === failingRepository);
      const deadline = Date.now() + 300_000;
      for (;;) {
        const handledDeliveries = new Set(handled.map((h) => h.id));
        const letters = await deadLetters();
        if ((handledDeliveries.size >= healthy.length && letters.length >= failing.length) || Date.now() > deadline) break;
        await sleep(1000);
      }
      const letters = await deadLetters();
      const strays = letters.filter((l) => l.repositoryId !== failingRepository);
      expect(strays.map((l) => `${l.createdAt} → ${l.deadAt}: ${l.lastError}`), `${context}: dead letters of repositories that answer; receiver down ${JSON.stringify(downs.map((d) => [new Date(d.killed).toISOString(), d.up ? new Date(d.up).toISOString() : null]))}`).to.deep.equal([]);
      expect(letters.map((l) => l.messageId).sort(), context).to.deep.equal(failing.map((m) => m.message.messageId).sort());
      const beforeRedelivery = await replyCounts();
      expect(healthy.filter((m) => !beforeRedelivery.has(m.message.messageId)).length, `${context}: unanswered mentions`).to.equal(0);

      // The receiver is fixed, and the dead letters are sent again with their delivery IDs.
      await kill(receiver);
      receiver = await startReceiver('');
      const { redelivering } = await botClient.redeliverWebhookDeliveries(webhook.webhookId, {});
      expect(redelivering.sort()).to.deep.equal(letters.map((l) => l.deliveryId).sort());
      const redeliveryDeadline = Date.now() + 120_000;
      while ((await deadLetters()).length > 0 && Date.now() < redeliveryDeadline) await sleep(500);
      expect(await deadLetters()).to.deep.equal([]);

      const replies = await replyCounts();
      const missing = mentions.filter((m) => !replies.has(m.message.messageId));
      const twice = [...replies].filter(([, count]) => count > 1);
      const unexpected = [...replies.keys()].filter((id) => !mentions.some((m) => m.message.messageId === id));
      expect({ missing: missing.length, twice: twice.length, unexpected }, context).to.deep.equal({ missing: 0, twice: 0, unexpected: [] });
      // At least once: a handler ran for every mention's delivery (the delivery ID is `<webhookId>.<notificationId>`).
      expect(new Set(handled.map((h) => h.id)).size, context).to.equal(mentions.length);
      expect(handled.every((h) => h.id.startsWith(`${webhook.webhookId}.`))).to.equal(true);
      await receiver.stop(10_000);

      // Figures, printed (speed is shown by `pnpm bench`, not asserted here).
      const ages = handled
        .filter((h) => h.created && h.repositoryId !== failingRepository)
        .map((h) => h.ageMs)
        .sort((a, b) => a - b);
      const p = (q: number) => ages[Math.max(0, Math.ceil(ages.length * q) - 1)];
      process.stdout.write(
        `      (${mentions.length} mentions; ${handled.length} handler runs for ${replies.size} replies, ${handled.filter((h) => !h.created).length} replayed; ` +
          `commit to handler p50 ${p(0.5)} ms, p99 ${p(0.99)} ms across kills; ${letters.length} dead letters redelivered)\n`,
      );
    });
  });
}
