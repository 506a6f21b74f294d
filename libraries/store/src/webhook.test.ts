import { expect } from 'chai';
import { ulid } from 'ulid';
import { testTargets } from '../test/targets.ts';
import { createStore, WebhookLimitError, type FeedPrincipal, type InboxOwner, type NewNotification, type Store, type WebhookLaneKey } from './index.ts';

function newNotification(): NewNotification {
  return { messageId: ulid(), roomId: ulid(), branchId: null, senderKind: 'user', senderId: 'u_alice', spans: [{ startByte: 0, endByte: 4 }] };
}

const appendOptions = () => ({ now: new Date(), outboxPayload: (n: { notificationId: string }) => JSON.stringify({ id: n.notificationId }) });

for (const target of testTargets) {
  describe(`webhooks on ${target.name}`, function () {
    let store: Store;
    let cleanup: () => Promise<void>;
    let principal: FeedPrincipal;
    let repositories: InboxOwner[];

    before(async function () {
      const opened = await target.open();
      store = createStore(opened.database);
      cleanup = opened.cleanup;
    });
    after(async () => cleanup());
    beforeEach(() => {
      principal = { principalKind: 'bot', principalId: `b_${ulid()}` };
      repositories = [ulid(), ulid()].map((repositoryId) => ({ repositoryId, ...principal }));
    });

    const append = async (owner: InboxOwner) => {
      const outcome = await store.notifications.append(owner, newNotification(), appendOptions());
      if (outcome.kind !== 'created') throw new Error('expected created');
      return outcome.notification;
    };
    const register = (now = new Date()) => store.webhooks.create({ webhookId: ulid(), principal, url: 'https://bot.example/hook', secret: 's3cret', now, maxPerPrincipal: 3 });
    const claim = (key: WebhookLaneKey, now = new Date()) => store.webhooks.claimLane(key, { now, leaseMs: 30_000, limit: 10 });

    it('starts a webhook at the end of its feed and hands later notifications to one lane per inbox', async function () {
      await append(repositories[0]!);
      const webhook = await register();
      expect(webhook.dispatchedFeedSeq).to.equal(1);
      const a1 = await append(repositories[0]!);
      const b1 = await append(repositories[1]!);
      const a2 = await append(repositories[0]!);
      expect(await store.webhooks.listBehind(1000)).to.include(webhook.webhookId);
      const lanes = await store.webhooks.dispatch(webhook.webhookId, { now: new Date(), limit: 100 });
      expect(lanes.map((l) => l.inboxKey).sort()).to.deep.equal([a1.inboxKey, b1.inboxKey].sort());
      expect(await store.webhooks.listBehind(1000)).not.to.include(webhook.webhookId);
      expect(await store.webhooks.dispatch(webhook.webhookId, { now: new Date(), limit: 100 })).to.deep.equal([]);

      const laneA = { webhookId: webhook.webhookId, inboxKey: a1.inboxKey };
      const work = await claim(laneA);
      expect(work?.notifications.map((n) => n.notificationId)).to.deep.equal([a1.notificationId, a2.notificationId]);
      // Held: nobody else claims it until it is released or the lease lapses.
      expect(await claim(laneA)).to.equal(null);
      expect(await claim(laneA, new Date(Date.now() + 31_000))).not.to.equal(null);
    });

    it('moves a lane past delivered and dead-lettered notifications, keeps failures apart per lane, and redelivers', async function () {
      const webhook = await register();
      const a1 = await append(repositories[0]!);
      const a2 = await append(repositories[0]!);
      const b1 = await append(repositories[1]!);
      await store.webhooks.dispatch(webhook.webhookId, { now: new Date(), limit: 100 });
      const laneA = { webhookId: webhook.webhookId, inboxKey: a1.inboxKey };
      const laneB = { webhookId: webhook.webhookId, inboxKey: b1.inboxKey };
      const due = (await store.webhooks.dueLanes({ now: new Date(), limit: 1000 })).filter((l) => l.webhookId === webhook.webhookId);
      expect(due).to.have.length(2);

      await claim(laneA);
      const later = new Date(Date.now() + 60_000);
      expect(await store.webhooks.recordFailure(laneA, { error: 'HTTP 500', retryAt: later })).to.equal(1);
      expect(await store.webhooks.recordFailure(laneA, { error: 'HTTP 500', retryAt: later })).to.equal(2);
      // A waits for its retry; B is due all the same.
      const dueNow = (await store.webhooks.dueLanes({ now: new Date(), limit: 1000 })).filter((l) => l.webhookId === webhook.webhookId);
      expect(dueNow).to.deep.equal([laneB]);
      expect(await claim(laneA)).to.equal(null);

      const deliveryId = `${webhook.webhookId}.${a1.notificationId}`;
      await store.webhooks.deadLetter(laneA, { notification: a1, deliveryId, attempts: 3, error: 'HTTP 500', now: new Date() });
      await store.webhooks.releaseLane(laneA, new Date());
      const next = await claim(laneA);
      expect(next?.lane.attempts).to.equal(0);
      expect(next?.notifications.map((n) => n.notificationId)).to.deep.equal([a2.notificationId]);
      // A failed try after a2 was sent (a later one of its batch, say), then the lane released with
      // its position in one statement: past a2, its attempts start over, nothing more to send.
      await store.webhooks.recordFailure(laneA, { error: 'HTTP 503', retryAt: new Date() });
      expect(await store.webhooks.releaseLane(laneA, new Date(), a2.seq)).to.equal(false);
      expect((await store.webhooks.dueLanes({ now: new Date(), limit: 1000 })).filter((l) => l.inboxKey === laneA.inboxKey)).to.deep.equal([]);
      // Caught up: nothing to claim, until a notification arrives.
      expect(await claim(laneA)).to.equal(null);
      const a3 = await append(repositories[0]!);
      const third = await claim(laneA);
      expect(third?.notifications.map((n) => n.notificationId)).to.deep.equal([a3.notificationId]);
      expect(third?.lane).to.include({ deliveredSeq: a2.seq, attempts: 0, lastError: null });
      await store.webhooks.markDelivered(laneA, a3.seq);

      const letters = await store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 });
      expect(letters.map((l) => [l.deadLetter.deliveryId, l.deadLetter.state, l.notification.notificationId])).to.deep.equal([[deliveryId, 'dead', a1.notificationId]]);
      expect(await store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10, after: letters[0]!.deadLetter })).to.deep.equal([]);

      expect(await store.webhooks.requestRedelivery(webhook.webhookId, { deliveryIds: ['nope'], now: new Date() })).to.deep.equal([]);
      expect(await store.webhooks.requestRedelivery(webhook.webhookId, { now: new Date() })).to.deep.equal([deliveryId]);
      const claimed = (await store.webhooks.claimRedeliveries({ now: new Date(), leaseMs: 30_000, limit: 100 })).filter((r) => r.webhook.webhookId === webhook.webhookId);
      expect(claimed.map((r) => r.notification.notificationId)).to.deep.equal([a1.notificationId]);
      expect(await store.webhooks.failRedelivery(deliveryId, { error: 'HTTP 502', retryAt: new Date(), maxAttempts: 2 })).to.deep.equal({ dead: false });
      expect(await store.webhooks.failRedelivery(deliveryId, { error: 'HTTP 502', retryAt: new Date(), maxAttempts: 2 })).to.deep.equal({ dead: true });
      expect((await store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 }))[0]?.deadLetter).to.include({ state: 'dead', attempts: 5, lastError: 'HTTP 502' });
      await store.webhooks.requestRedelivery(webhook.webhookId, { deliveryIds: [deliveryId], now: new Date() });
      await store.webhooks.claimRedeliveries({ now: new Date(), leaseMs: 30_000, limit: 100 });
      await store.webhooks.completeRedelivery(deliveryId);
      expect(await store.webhooks.listDeadLetters(webhook.webhookId, { limit: 10 })).to.deep.equal([]);
    });

    it('holds at most the limit of webhooks per principal, and removes one with its lanes', async function () {
      const registered = await Promise.all([register(), register(), register(), register()].map((p) => p.catch((err: unknown) => err)));
      expect(registered.filter((r) => r instanceof WebhookLimitError)).to.have.length(1);
      const held = await store.webhooks.listByPrincipal(principal);
      expect(held).to.have.length(3);
      const [first] = held;
      await append(repositories[0]!);
      await store.webhooks.dispatch(first!.webhookId, { now: new Date(), limit: 100 });
      expect(await store.webhooks.remove(first!.webhookId, { principalKind: 'bot', principalId: 'b_other' })).to.equal(false);
      expect(await store.webhooks.remove(first!.webhookId, principal)).to.equal(true);
      expect(await store.webhooks.find(first!.webhookId)).to.equal(null);
      expect((await store.webhooks.dueLanes({ now: new Date(), limit: 1000 })).filter((l) => l.webhookId === first!.webhookId)).to.deep.equal([]);
    });
  });
}
