import { expect } from 'chai';
import { ulid } from 'ulid';
import { testTargets } from '../test/targets.ts';
import { createStore, FanoutSettledError, inboxKey, type InboxOwner, type NewNotification, type Store } from './index.ts';

function newNotification(overrides: Partial<NewNotification> = {}): NewNotification {
  return {
    messageId: ulid(),
    roomId: ulid(),
    branchId: null,
    senderKind: 'user',
    senderId: 'u_alice',
    spans: [{ startByte: 0, endByte: 4 }],
    ...overrides,
  };
}

const appendOptions = (now = new Date()) => ({ now, outboxPayload: (n: { notificationId: string }) => JSON.stringify({ id: n.notificationId }) });

for (const target of testTargets) {
  describe(`inbox store on ${target.name}`, function () {
    let store: Store;
    let cleanup: () => Promise<void>;
    let owner: InboxOwner;

    before(async function () {
      const opened = await target.open();
      store = createStore(opened.database);
      cleanup = opened.cleanup;
    });
    after(async () => cleanup());
    beforeEach(() => {
      owner = { repositoryId: ulid(), principalKind: 'human', principalId: `u_${ulid()}` };
    });

    it('creates the inbox on first notification and numbers notifications contiguously', async function () {
      expect(await store.inboxes.find(owner)).to.equal(null);
      for (let i = 0; i < 4; i++) {
        const outcome = await store.notifications.append(owner, newNotification(), appendOptions());
        expect(outcome.kind).to.equal('created');
        if (outcome.kind === 'created') expect(outcome.notification.seq).to.equal(i + 1);
      }
      const inbox = await store.inboxes.find(owner);
      expect(inbox).to.include({ inboxKey: inboxKey(owner), lastSeq: 4, ackSeq: 0, principalKind: 'human' });
      expect((await store.notifications.listAfter(inboxKey(owner), 2, 10)).map((n) => n.seq)).to.deep.equal([3, 4]);
      expect((await store.notifications.findBySeq(inboxKey(owner), 3))?.seq).to.equal(3);
      expect(await store.notifications.findBySeq(inboxKey(owner), 5)).to.equal(null);
    });

    it('makes one notification per (inbox, message), also under concurrent redelivery', async function () {
      const input = newNotification({ branchId: ulid(), spans: [{ startByte: 0, endByte: 3 }, { startByte: 9, endByte: 12 }] });
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => store.notifications.append(owner, input, appendOptions())));
      expect(outcomes.filter((o) => o.kind === 'created')).to.have.length(1);
      expect(new Set(outcomes.map((o) => o.notification.notificationId)).size).to.equal(1);
      const [row] = await store.notifications.listAfter(inboxKey(owner), 0, 10);
      expect(row?.spans).to.deep.equal(input.spans);
      expect(row?.branchId).to.equal(input.branchId);
      // Another inbox gets its own notification of the same message.
      const other = { ...owner, principalKind: 'bot' as const, principalId: 'b_ci' };
      expect((await store.notifications.append(other, input, appendOptions())).kind).to.equal('created');
    });

    it('serializes concurrent appends into a gap-free order with (createdAt, notificationId) in seq order', async function () {
      const frozen = new Date('2026-03-01T00:00:00.000Z');
      await Promise.all(Array.from({ length: 30 }, (_, i) => store.notifications.append(owner, newNotification(), appendOptions(i % 2 ? frozen : new Date(frozen.getTime() - 1000)))));
      const rows = await store.notifications.listAfter(inboxKey(owner), 0, 100);
      expect(rows.map((r) => r.seq)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i + 1));
      const keys = rows.map((r) => [r.createdAt.getTime(), r.notificationId] as const);
      const sorted = [...keys].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
      expect(sorted).to.deep.equal(keys);
    });

    it('writes the notification outbox entry in the same transaction', async function () {
      const outcome = await store.notifications.append(owner, newNotification(), appendOptions());
      if (outcome.kind !== 'created') throw new Error('expected created');
      const entry = (await store.outbox.listStale(new Date(Date.now() + 60_000), 100_000)).find((e) => e.id === outcome.outboxId);
      expect(entry).to.include({ channel: 'notifications', scopeKey: inboxKey(owner), seq: 1 });
      await store.outbox.remove([outcome.outboxId]);
    });

    it('moves the checkpoint by compare-and-set: one winner among racing moves', async function () {
      for (let i = 0; i < 5; i++) await store.notifications.append(owner, newNotification(), appendOptions());
      const key = inboxKey(owner);
      const results = await Promise.all([3, 4, 5, 3, 5].map((to) => store.inboxes.advanceAck(key, 0, to)));
      expect(results.filter(Boolean)).to.have.length(1);
      const ackSeq = (await store.inboxes.find(owner))!.ackSeq;
      expect([3, 4, 5]).to.include(ackSeq);
      expect(await store.inboxes.advanceAck(key, ackSeq, 6)).to.equal(false); // beyond the last notification
      const row = await store.notifications.findBySeq(key, 1);
      expect(row!.seq, 'acknowledged: at or below the checkpoint').to.be.at.most(ackSeq);
    });

    it('records a mention fan-out in the message append transaction, only for messages with mentions', async function () {
      const scope = { repositoryId: owner.repositoryId, branchId: null };
      const base = {
        senderKind: 'user' as const, senderId: 'u_alice', requestId: ulid(), bodyMarkdown: '@bob hi', bodyBytes: 7, renderedHtml: '<p>@bob hi</p>',
        authorizationDecisionId: ulid(), authorizingSubjectId: 'u_alice', authorizingSubjectKind: 'user' as const, botCredentialId: null, botGrantId: null,
      };
      const options = { newRoomId: ulid(), now: new Date() };
      const plain = await store.messages.append(scope, { ...base, idempotencyKey: ulid(), mentions: null }, options);
      const mentioned = await store.messages.append(
        scope,
        { ...base, idempotencyKey: ulid(), mentions: [{ principalKind: 'human', principalId: 'u_bob', startByte: 0, endByte: 4 }] },
        options,
      );
      if (plain.kind !== 'created' || mentioned.kind !== 'created') throw new Error('expected created');
      expect(await store.mentionFanout.find(plain.message.messageId)).to.equal(null);
      const row = await store.mentionFanout.find(mentioned.message.messageId);
      expect(row).to.include({ roomId: mentioned.message.roomId, seq: 2, attempts: 0, dead: false });
    });

    it('claims fan-out rows as leases: once, skipped while leased, again after the lease lapses', async function () {
      const messageId = await fanoutRow(store, owner.repositoryId, new Date(Date.now() - 60_000));
      const now = new Date();
      const first = await store.mentionFanout.claim(messageId, { now, leaseMs: 10_000 });
      expect(first?.attempts).to.equal(1);
      expect(await store.mentionFanout.claim(messageId, { now, leaseMs: 10_000 })).to.equal(null);
      const due = await store.mentionFanout.claimDue({ now, graceMs: 0, leaseMs: 10_000, limit: 1000 });
      expect(due.map((r) => r.messageId)).not.to.include(messageId);
      const later = new Date(now.getTime() + 11_000);
      const again = await store.mentionFanout.claimDue({ now: later, graceMs: 0, leaseMs: 10_000, limit: 1000 });
      expect(again.find((r) => r.messageId === messageId)?.attempts).to.equal(2);
      await store.mentionFanout.complete(messageId);
      expect(await store.mentionFanout.find(messageId)).to.equal(null);
    });

    it('never hands one due row to two concurrent sweepers', async function () {
      const ids = new Set<string>();
      // One room each: a sweep claims one row per room (its head).
      for (let i = 0; i < 20; i++) ids.add(await fanoutRow(store, ulid(), new Date(Date.now() - 3_600_000)));
      const now = new Date();
      const claims = await Promise.all(Array.from({ length: 6 }, () => store.mentionFanout.claimDue({ now, graceMs: 0, leaseMs: 60_000, limit: 10_000 })));
      const mine = claims.flat().filter((r) => ids.has(r.messageId)).map((r) => r.messageId);
      expect(mine).to.have.length(ids.size);
      expect(new Set(mine).size).to.equal(ids.size);
      for (const id of ids) await store.mentionFanout.complete(id);
    });

    it('leaves young rows to the backbone path and dead-letters a row after its attempts', async function () {
      const now = new Date();
      const young = await fanoutRow(store, owner.repositoryId, now);
      const due = await store.mentionFanout.claimDue({ now, graceMs: 5000, leaseMs: 1000, limit: 10_000 });
      expect(due.map((r) => r.messageId)).not.to.include(young);

      let t = now.getTime();
      for (let attempt = 1; attempt <= 3; attempt++) {
        const claimed = await store.mentionFanout.claim(young, { now: new Date(t), leaseMs: 1000 });
        expect(claimed?.attempts).to.equal(attempt);
        const { dead } = await store.mentionFanout.fail(young, { retryAt: new Date(t + 10), error: `boom ${attempt}`, maxAttempts: 3 });
        expect(dead).to.equal(attempt === 3);
        t += 20;
      }
      expect(await store.mentionFanout.claim(young, { now: new Date(t + 60_000), leaseMs: 1000 })).to.equal(null);
      const dead = await store.mentionFanout.listDead(1000);
      expect(dead.find((r) => r.messageId === young)).to.include({ lastError: 'boom 3', attempts: 3, dead: true });
      expect((await store.mentionFanout.counts()).dead).to.be.greaterThan(0);
    });

    it('claims a room\'s rows in seq order only: the next one once the earlier is completed or dead', async function () {
      const old = new Date(Date.now() - 60_000);
      const [first, second, third] = [await fanoutRow(store, owner.repositoryId, old), await fanoutRow(store, owner.repositoryId, old), await fanoutRow(store, owner.repositoryId, old)];
      const roomId = (await store.mentionFanout.find(first))!.roomId;
      const now = new Date();
      const lease = { now, leaseMs: 10_000 };
      expect(await store.mentionFanout.claim(second, lease), 'a row behind a pending one').to.equal(null);
      const due = await store.mentionFanout.claimDue({ now, graceMs: 0, leaseMs: 10_000, limit: 10_000 });
      expect(due.filter((r) => r.roomId === roomId).map((r) => r.messageId), 'one head per room').to.deep.equal([first]);
      expect(await store.mentionFanout.claimNext(roomId, lease), 'the head is leased').to.equal(null);
      await store.mentionFanout.complete(first);
      expect(await store.mentionFanout.claim(third, lease), 'still behind the second').to.equal(null);
      const next = await store.mentionFanout.claimNext(roomId, lease);
      expect(next?.messageId).to.equal(second);
      expect(await store.mentionFanout.claimNext(roomId, lease), 'claimed once').to.equal(null);
      await store.mentionFanout.fail(second, { retryAt: new Date(now.getTime() + 60_000), error: 'poison', maxAttempts: 1 });
      // A dead row holds its room back no longer, and completing it keeps the dead letter.
      await store.mentionFanout.complete(second);
      expect((await store.mentionFanout.find(second))?.dead).to.equal(true);
      expect((await store.mentionFanout.claim(third, lease))?.messageId).to.equal(third);
      await store.mentionFanout.complete(third);
      expect(await store.mentionFanout.claimNext(roomId, lease)).to.equal(null);
    });

    it('requeues dead rows by message, by room or all, as rows nobody has tried, and leaves live rows alone', async function () {
      const old = new Date(Date.now() - 60_000);
      const lease = { now: new Date(), leaseMs: 10_000 };
      const kill = async (id: string) => {
        await store.mentionFanout.claim(id, lease);
        await store.mentionFanout.fail(id, { retryAt: new Date(Date.now() + 60_000), error: 'core said no', maxAttempts: 1 });
      };
      const [a, b] = [await fanoutRow(store, owner.repositoryId, old), await fanoutRow(store, owner.repositoryId, old)];
      const roomId = (await store.mentionFanout.find(a))!.roomId;
      await kill(a);
      await kill(b);
      const live = await fanoutRow(store, ulid(), old);
      expect(await store.mentionFanout.requeueDead({ messageIds: [a, live] }), 'only the dead one of the two').to.deep.equal([a]);
      expect(await store.mentionFanout.find(a)).to.include({ dead: false, attempts: 0, lastError: 'core said no' });
      expect((await store.mentionFanout.claimNext(roomId, { now: new Date(), leaseMs: 10_000 }))?.messageId, 'the requeued row is due now').to.equal(a);
      await store.mentionFanout.complete(a);
      expect(await store.mentionFanout.requeueDead({ roomId })).to.deep.equal([b]);
      await store.mentionFanout.complete(b);
      expect(await store.mentionFanout.requeueDead({ messageIds: [] })).to.deep.equal([]);
      await kill(live);
      const requeued = await store.mentionFanout.requeueDead({ all: true });
      expect(requeued).to.include(live);
      // Earlier tests' dead letters came back too: done with, they leave no due rows behind.
      for (const id of requeued) await store.mentionFanout.complete(id);
    });

    it('holds a room behind a head waiting for its retry, and hands the head out again when it is due', async function () {
      const old = new Date(Date.now() - 60_000);
      const [first, second] = [await fanoutRow(store, owner.repositoryId, old), await fanoutRow(store, owner.repositoryId, old)];
      const roomId = (await store.mentionFanout.find(first))!.roomId;
      const t = Date.now();
      expect(await store.mentionFanout.claim(first, { now: new Date(t), leaseMs: 10 })).to.not.equal(null);
      await store.mentionFanout.fail(first, { retryAt: new Date(t + 1000), error: 'boom', maxAttempts: 5 });
      expect(await store.mentionFanout.claimNext(roomId, { now: new Date(t + 500), leaseMs: 10 })).to.equal(null);
      expect(await store.mentionFanout.claim(second, { now: new Date(t + 500), leaseMs: 10 })).to.equal(null);
      const due = await store.mentionFanout.claimDue({ now: new Date(t + 1500), graceMs: 0, leaseMs: 10_000, limit: 10_000 });
      expect(due.filter((r) => r.roomId === roomId).map((r) => r.messageId)).to.deep.equal([first]);
      await store.mentionFanout.complete(first);
      expect((await store.mentionFanout.claimNext(roomId, { now: new Date(t + 1500), leaseMs: 10 }))?.messageId).to.equal(second);
      await store.mentionFanout.complete(second);
    });

    it('writes a notification only while its fan-out row is pending, when asked to', async function () {
      const messageId = await fanoutRow(store, owner.repositoryId, new Date());
      const guarded = { ...appendOptions(), whileFanoutPending: true };
      expect((await store.notifications.append(owner, newNotification({ messageId }), guarded)).kind).to.equal('created');
      await store.mentionFanout.complete(messageId);
      const other: InboxOwner = { ...owner, principalId: `u_${ulid()}` };
      let thrown: unknown;
      await store.notifications.append(other, newNotification({ messageId }), guarded).catch((err: unknown) => (thrown = err));
      expect(thrown).to.be.instanceOf(FanoutSettledError);
      expect(await store.inboxes.find(other), 'nothing written').to.equal(null);
      // Without the option the write does not look at the fan-out row.
      expect((await store.notifications.append(other, newNotification({ messageId }), appendOptions())).kind).to.equal('created');
    });

    it('does not count a released attempt toward dead-lettering', async function () {
      const id = await fanoutRow(store, owner.repositoryId, new Date());
      for (let i = 0; i < 5; i++) {
        const t = Date.now() + i * 100;
        expect(await store.mentionFanout.claim(id, { now: new Date(t), leaseMs: 10 })).to.not.equal(null);
        await store.mentionFanout.release(id, { retryAt: new Date(t + 20), error: 'core unavailable' });
      }
      expect(await store.mentionFanout.find(id)).to.include({ attempts: 0, dead: false, lastError: 'core unavailable' });
      await store.mentionFanout.complete(id);
    });
  });
}

/** A real message with one mention, and so a fan-out row, created at `at`. */
async function fanoutRow(store: Store, repositoryId: string, at: Date): Promise<string> {
  const outcome = await store.messages.append(
    { repositoryId, branchId: null },
    {
      senderKind: 'user', senderId: 'u_alice', requestId: ulid(), idempotencyKey: ulid(), bodyMarkdown: '@bob', bodyBytes: 4, renderedHtml: '<p>@bob</p>',
      mentions: [{ principalKind: 'human', principalId: 'u_bob', startByte: 0, endByte: 4 }],
      authorizationDecisionId: ulid(), authorizingSubjectId: 'u_alice', authorizingSubjectKind: 'user', botCredentialId: null, botGrantId: null,
    },
    { newRoomId: ulid(), now: at },
  );
  if (outcome.kind !== 'created') throw new Error('expected created');
  return outcome.message.messageId;
}
