import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { lookup } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { InProcessBackbone } from '@chat/backbone';
import type { NotificationRow } from '@chat/store';
import { DELIVERY_HEADERS, OutboundAddressGuard, signDelivery, WebhookSender } from '@chat/webhooks';
import { openWorld, TEST_REDIS_URL, waitFor, worldFixture, type TestWorld } from '../test/notifier-harness.ts';
import { createNotifierRuntime, type NotifierRuntime, type WebhookSettingsInput } from './runtime.ts';
import { bullmqWebhookQueue } from './webhook-queue.ts';

interface Received {
  deliveryId: string;
  repositoryId: string;
  notificationId: string;
  webhookId: string;
}

/** A receiver on loopback: checks every signature, records deliveries, and answers what `answer` says per repository. */
async function startReceiver(secret: string) {
  const received: Received[] = [];
  const refused: string[] = [];
  let answer: (repositoryId: string) => number = () => 200;
  let answerAfterMs = 0;
  /** POSTs being answered at once, most of them at any moment. */
  let open = 0;
  let mostOpen = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const timestamp = Number(req.headers[DELIVERY_HEADERS.timestamp]);
      if (req.headers[DELIVERY_HEADERS.signature] !== signDelivery(secret, timestamp, body) || Math.abs(Date.now() / 1000 - timestamp) > 300) {
        refused.push(body);
        res.writeHead(401).end();
        return;
      }
      const delivery = JSON.parse(body) as { deliveryId: string; event: string; webhookId: string; notification: { notificationId: string; repositoryId: string; cursor: string } };
      expect(delivery.event).to.equal('notification');
      expect(req.headers[DELIVERY_HEADERS.delivery]).to.equal(delivery.deliveryId);
      expect(delivery.notification.cursor).to.be.a('string');
      const status = answer(delivery.notification.repositoryId);
      if (status < 300) {
        received.push({ deliveryId: delivery.deliveryId, repositoryId: delivery.notification.repositoryId, notificationId: delivery.notification.notificationId, webhookId: delivery.webhookId });
      }
      mostOpen = Math.max(mostOpen, ++open);
      setTimeout(() => {
        open -= 1;
        res.writeHead(status).end();
      }, answerAfterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    refused,
    answerWith(fn: (repositoryId: string) => number) {
      answer = fn;
    },
    answerAfter(ms: number) {
      answerAfterMs = ms;
    },
    get mostOpen() {
      return mostOpen;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const FAST: WebhookSettingsInput = {
  addresses: { allowLoopback: true },
  retry: { maxAttempts: 3, baseDelayMs: 40, maxDelayMs: 200 },
  dispatchIntervalMs: 50,
  sweepIntervalMs: 100,
  timeoutMs: 2000,
};

const queues = [
  { name: 'in this process', queue: undefined },
  { name: 'on BullMQ', queue: () => bullmqWebhookQueue({ url: TEST_REDIS_URL, keyPrefix: `test-${ulid()}`, mode: 'single', seedNodes: [] }) },
];

for (const kind of queues) {
  describe(`webhook delivery ${kind.name}`, function () {
    this.timeout(60_000);
    let world: TestWorld;
    let runtime: NotifierRuntime;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let otherRepositoryId: string;
    const secret = 'a-webhook-secret-of-some-length';
    const bot = { principalKind: 'bot' as const, principalId: 'b_ci' };

    /** The world's fixture with a second repository where b_ci holds grant g_2 (`g2State`). */
    const fixture = (g2State: 'active' | 'revoked') => {
      const base = worldFixture(world.repositoryId, world.branchId);
      base.repositories.push({ id: otherRepositoryId, state: 'active', branches: [], members: { u_alice: 'write', u_bob: 'read' } });
      base.bots[0]!.grants.push({ id: 'g_2', repositoryId: otherRepositoryId, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['room:read'], state: g2State });
      return base;
    };

    before(async () => {
      world = await openWorld();
      otherRepositoryId = ulid();
      world.core.replaceFixture(fixture('active'));
    });
    after(async () => world.close());
    beforeEach(async () => {
      receiver = await startReceiver(secret);
      runtime = createNotifierRuntime({
        resources: { store: world.store, backbone: new InProcessBackbone(), core: world.coreClient, cursors: world.cursors },
        logger: world.logger,
        settings: { sweeper: { graceMs: 3_600_000 }, webhooks: FAST },
        ...(kind.queue ? { webhookQueue: kind.queue() } : {}),
      });
      await runtime.start();
    });
    afterEach(async () => {
      await runtime.stop();
      await receiver.close();
      world.core.replaceFixture(fixture('active'));
      // Each test's webhook is removed, so the next test's runtime does not deliver to a closed receiver.
      for (const w of await world.store.webhooks.listByPrincipal(bot)) await world.store.webhooks.remove(w.webhookId, bot);
    });

    const notify = async (repositoryId: string): Promise<NotificationRow> => {
      const outcome = await world.store.notifications.append(
        { repositoryId, ...bot },
        { messageId: ulid(), roomId: ulid(), branchId: null, senderKind: 'user', senderId: 'u_alice', spans: [{ startByte: 0, endByte: 5 }] },
        { now: new Date(), outboxPayload: (n) => JSON.stringify({ id: n.notificationId }) },
      );
      if (outcome.kind !== 'created') throw new Error('expected a new notification');
      return outcome.notification;
    };
    const register = (url = receiver.url) => world.store.webhooks.create({ webhookId: ulid(), principal: bot, url, secret, now: new Date(), maxPerPrincipal: 5 });

    it('posts each notification written after registration once, signed, in inbox order per repository', async function () {
      const before = await notify(world.repositoryId);
      const webhook = await register();
      const sent: NotificationRow[] = [];
      for (let i = 0; i < 30; i++) sent.push(await notify(i % 3 === 0 ? otherRepositoryId : world.repositoryId));
      await waitFor('every delivery', async () => receiver.received.length >= sent.length);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.refused).to.deep.equal([]);
      expect(receiver.received.map((r) => r.notificationId)).not.to.include(before.notificationId);
      expect(receiver.received.map((r) => r.notificationId).sort()).to.deep.equal(sent.map((n) => n.notificationId).sort());
      for (const repositoryId of [world.repositoryId, otherRepositoryId]) {
        const order = receiver.received.filter((r) => r.repositoryId === repositoryId).map((r) => r.notificationId);
        expect(order).to.deep.equal(sent.filter((n) => n.repositoryId === repositoryId).map((n) => n.notificationId));
      }
      expect(receiver.received.every((r) => r.webhookId === webhook.webhookId && r.deliveryId === `${webhook.webhookId}.${r.notificationId}`)).to.equal(true);
    });

    it('dead-letters a failing repository after its tries while the other goes on, and redelivers with the same delivery IDs', async function () {
      const webhook = await register();
      receiver.answerWith((repositoryId) => (repositoryId === otherRepositoryId ? 500 : 200));
      const failing = [await notify(otherRepositoryId), await notify(otherRepositoryId)];
      const healthy: NotificationRow[] = [];
      for (let i = 0; i < 10; i++) healthy.push(await notify(world.repositoryId));
      await waitFor('the healthy repository', async () => receiver.received.length >= healthy.length);
      await waitFor('both dead letters', async () => (await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 })).length === 2);
      const letters = await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 });
      expect(letters.map((l) => l.notification.notificationId)).to.deep.equal(failing.map((n) => n.notificationId));
      expect(letters.every((l) => l.deadLetter.attempts === 3 && l.deadLetter.lastError.includes('500'))).to.equal(true);

      receiver.answerWith(() => 200);
      await world.store.webhooks.requestRedelivery(webhook.webhookId, { now: new Date() });
      await waitFor('the redeliveries', async () => receiver.received.length >= healthy.length + 2);
      expect(receiver.received.slice(-2).map((r) => r.deliveryId).sort()).to.deep.equal(letters.map((l) => l.deadLetter.deliveryId).sort());
      await waitFor('the dead letters gone', async () => (await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 })).length === 0);
    });

    it('stops a repository whose grant is revoked and goes on with the others', async function () {
      await register();
      world.core.replaceFixture(fixture('revoked'));
      const revoked = await notify(otherRepositoryId);
      const allowed = await notify(world.repositoryId);
      await waitFor('the allowed delivery', async () => receiver.received.some((r) => r.notificationId === allowed.notificationId));
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.received.map((r) => r.notificationId)).not.to.include(revoked.notificationId);
    });

    it('does not redeliver a dead letter of a repository the principal may no longer read: it is dead again', async function () {
      const webhook = await register();
      receiver.answerWith((repositoryId) => (repositoryId === otherRepositoryId ? 500 : 200));
      const failed = await notify(otherRepositoryId);
      await waitFor('the dead letter', async () => (await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 })).length === 1);
      receiver.answerWith(() => 200);
      world.core.replaceFixture(fixture('revoked'));
      expect(await world.store.webhooks.requestRedelivery(webhook.webhookId, { now: new Date() })).to.have.length(1);
      await waitFor('dead again', async () => (await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 }))[0]?.deadLetter.state === 'dead');
      const [letter] = await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 });
      expect(letter!.deadLetter.lastError).to.match(/may not read/);
      expect(receiver.received.map((r) => r.notificationId)).not.to.include(failed.notificationId);
    });

    it('keeps a lane to one sender while a batch to a slow receiver outlasts the claim: the claim is renewed as the batch goes', async function () {
      // Answers of 150 ms and a claim of 5.4 s (twice the 200 ms timeout, plus 5 s): a batch of 50
      // takes 7.5 s. A second notifier sweeps every 100 ms and takes any lane whose claim lapsed.
      const slow: WebhookSettingsInput = { ...FAST, timeoutMs: 200 };
      const second = createNotifierRuntime({
        resources: { store: world.store, backbone: new InProcessBackbone(), core: world.coreClient, cursors: world.cursors },
        logger: world.logger,
        settings: { sweeper: { graceMs: 3_600_000 }, webhooks: slow },
        ...(kind.queue ? { webhookQueue: kind.queue() } : {}),
      });
      await runtime.stop();
      runtime = createNotifierRuntime({
        resources: { store: world.store, backbone: new InProcessBackbone(), core: world.coreClient, cursors: world.cursors },
        logger: world.logger,
        settings: { sweeper: { graceMs: 3_600_000 }, webhooks: slow },
        ...(kind.queue ? { webhookQueue: kind.queue() } : {}),
      });
      receiver.answerAfter(150);
      await register();
      const sent: NotificationRow[] = [];
      for (let i = 0; i < 60; i++) sent.push(await notify(world.repositoryId));
      await Promise.all([runtime.start(), second.start()]);
      try {
        await waitFor('every delivery', async () => receiver.received.length >= sent.length, 30_000);
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        await second.stop();
      }
      expect(receiver.mostOpen, 'POSTs of the lane at once').to.equal(1);
      expect(receiver.received.map((r) => r.notificationId)).to.deep.equal(sent.map((n) => n.notificationId));
    });

    it('refuses a private address and dead-letters what was meant for it', async function () {
      const webhook = await register('https://10.1.2.3/hook');
      await notify(world.repositoryId);
      await waitFor('the dead letter', async () => (await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 })).length === 1);
      const [letter] = await world.store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 });
      expect(letter!.deadLetter.lastError).to.match(/^refused: /);
    });
  });
}

describe('webhook sender', function () {
  it('checks the address a host name resolves to when it connects, not only the URL', async function () {
    const strict = new WebhookSender(new OutboundAddressGuard({ allowLoopback: false, allowedCidrs: [] }), { timeoutMs: 1000 });
    const lenient = new WebhookSender(new OutboundAddressGuard({ allowLoopback: true, allowedCidrs: [] }), { timeoutMs: 1000 });
    const receiver = await startReceiver('s');
    try {
      const port = new URL(receiver.url).port;
      const post = { secret: 'not-the-receivers', deliveryId: 'd', body: '{}' };
      // `localhost` passes the URL check of a lenient guard only; a https name resolving to loopback fails at the lookup.
      expect(await strict.send({ ...post, url: `http://localhost:${port}/hook` })).to.include({ delivered: false });
      // The machine's own name resolves to a loopback address (/etc/hosts): a name the URL check cannot judge.
      const own = await lookup(hostname()).catch(() => undefined);
      if (own && /^127\.|^::1$/.test(own.address)) {
        const viaLookup = await strict.send({ ...post, url: `https://${hostname()}:${port}/hook` });
        expect(viaLookup).to.deep.include({ delivered: false });
        expect((viaLookup as { error: string }).error).to.match(/^refused: .*loopback/);
      }
      expect(receiver.refused.length + receiver.received.length).to.equal(0);
      // What a lenient guard lets through reaches the receiver, which refuses the wrong signature.
      expect(await lenient.send({ ...post, url: `http://localhost:${port}/hook` })).to.include({ delivered: false, status: 401 });
    } finally {
      await Promise.all([strict.close(), lenient.close(), receiver.close()]);
    }
  });
});
