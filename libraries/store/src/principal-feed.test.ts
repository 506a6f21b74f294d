import { expect } from 'chai';
import { ulid } from 'ulid';
import { TEST_DATABASE_URL, testTargets } from '../test/targets.ts';
import { openDatabase } from './database.ts';
import { rejection } from '../test/rejection.ts';
import {
  createStore,
  FeedCheckpointStaleError,
  FeedPositionUnavailableError,
  feedKey,
  inboxKey,
  type FeedPrincipal,
  type InboxOwner,
  type NewNotification,
  type NotificationAppendOutcome,
  type Store,
} from './index.ts';

function newNotification(): NewNotification {
  return { messageId: ulid(), roomId: ulid(), branchId: null, senderKind: 'user', senderId: 'u_alice', spans: [{ startByte: 0, endByte: 4 }] };
}

const appendOptions = () => ({ now: new Date(), outboxPayload: (n: { notificationId: string; seq: number }) => JSON.stringify({ id: n.notificationId, seq: n.seq }) });

function created(outcome: NotificationAppendOutcome): Extract<NotificationAppendOutcome, { kind: 'created' }> {
  if (outcome.kind !== 'created') throw new Error('expected created');
  return outcome;
}

for (const target of testTargets) {
  describe(`principal feed on ${target.name}`, function () {
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
      repositories = [ulid(), ulid(), ulid()].map((repositoryId) => ({ repositoryId, ...principal }));
    });

    const append = async (owner: InboxOwner, input = newNotification()) => store.notifications.append(owner, input, appendOptions());

    it('numbers a principal\'s notifications contiguously across its repositories, apart from other principals', async function () {
      const order = [0, 1, 0, 2, 1, 0];
      const outcomes = [];
      for (const i of order) outcomes.push(created(await append(repositories[i]!)));
      expect(outcomes.map((o) => o.feed.feedSeq)).to.deep.equal([1, 2, 3, 4, 5, 6]);
      expect(outcomes.map((o) => o.notification.feedSeq)).to.deep.equal([1, 2, 3, 4, 5, 6]);
      expect(outcomes.map((o) => o.notification.seq)).to.deep.equal([1, 1, 2, 1, 2, 3]);
      expect(outcomes.every((o) => o.feed.feedKey === `feed:bot:${principal.principalId}`)).to.equal(true);
      expect(await store.principalFeeds.find(principal)).to.deep.equal({ feedKey: feedKey(principal), ...principal, lastSeq: 6, ackSeq: 0 });
      // The human of the same id has a feed of its own.
      const human = { repositoryId: repositories[0]!.repositoryId, principalKind: 'human' as const, principalId: principal.principalId };
      expect(created(await append(human)).feed).to.include({ feedKey: `feed:human:${principal.principalId}`, feedSeq: 1 });
      expect(await store.principalFeeds.find({ principalKind: 'bot', principalId: `b_${ulid()}` })).to.equal(null);
    });

    it('takes no feed seq for a notification that already existed, so the feed has no gap', async function () {
      const input = newNotification();
      created(await append(repositories[0]!, input));
      const again = await append(repositories[0]!, input);
      expect(again.kind).to.equal('existing');
      expect(again.notification.feedSeq).to.equal(1);
      const redelivered = await Promise.all(Array.from({ length: 6 }, () => append(repositories[0]!, input)));
      expect(redelivered.map((o) => o.kind)).to.deep.equal(Array(6).fill('existing'));
      expect(created(await append(repositories[1]!)).feed.feedSeq).to.equal(2);
      expect((await store.principalFeeds.find(principal))?.lastSeq).to.equal(2);
    });

    it('writes the inbox entry and the feed entry to the outbox in the same transaction', async function () {
      created(await append(repositories[1]!));
      const outcome = created(await append(repositories[0]!));
      const entries = await store.outbox.listStale(new Date(Date.now() + 60_000), 100_000);
      const inboxEntry = entries.find((e) => e.id === outcome.outboxId);
      const feedEntry = entries.find((e) => e.id === outcome.feed.outboxId);
      const inboxPayload = JSON.stringify({ id: outcome.notification.notificationId, seq: 1 });
      expect(inboxEntry).to.include({ channel: 'notifications', scopeKey: inboxKey(repositories[0]!), seq: 1, payload: inboxPayload });
      expect(feedEntry).to.include({ channel: 'notifications', scopeKey: feedKey(principal), seq: 2, payload: outcome.feed.payload });
      expect(outcome.feed.payload).to.equal(`{"inboxSeq":1,"notification":${inboxPayload}}`);
      expect(JSON.parse(outcome.feed.payload)).to.deep.equal({ inboxSeq: 1, notification: JSON.parse(inboxPayload) });
      await store.outbox.remove(entries.filter((e) => e.scopeKey.endsWith(principal.principalId)).map((e) => e.id));
    });

    it('lists the feed after a position in feed order, each notification with its inbox checkpoint', async function () {
      for (const i of [0, 1, 0, 2]) created(await append(repositories[i]!));
      expect(await store.inboxes.advanceAck(inboxKey(repositories[0]!), 0, 1)).to.equal(true);
      const all = await store.principalFeeds.listAfter(principal, 0, 100);
      expect(all.map((r) => [r.feedSeq, r.repositoryId, r.seq, r.inboxAckSeq])).to.deep.equal([
        [1, repositories[0]!.repositoryId, 1, 1],
        [2, repositories[1]!.repositoryId, 1, 0],
        [3, repositories[0]!.repositoryId, 2, 1],
        [4, repositories[2]!.repositoryId, 1, 0],
      ]);
      expect(all.every((r) => r.targetKind === 'bot' && r.targetId === principal.principalId)).to.equal(true);
      expect((await store.principalFeeds.listAfter(principal, 1, 2)).map((r) => r.feedSeq)).to.deep.equal([2, 3]);
      expect(await store.principalFeeds.listAfter(principal, 4, 10)).to.deep.equal([]);
      expect(await store.principalFeeds.listAfter({ ...principal, principalKind: 'human' }, 0, 10)).to.deep.equal([]);
    });

    it('acknowledges forward and moves each inbox checkpoint to its highest notification at or below the position', async function () {
      // feed: 1 A1, 2 B1, 3 A2, 4 C1, 5 B2, 6 A3
      for (const i of [0, 1, 0, 2, 1, 0]) created(await append(repositories[i]!));
      const ackOf = async (i: number) => (await store.inboxes.find(repositories[i]!))!.ackSeq;
      expect(await store.principalFeeds.acknowledge(principal, { throughSeq: 3, expectedSeq: 0 })).to.deep.equal({ ackSeq: 3, replayed: false });
      expect([await ackOf(0), await ackOf(1), await ackOf(2)]).to.deep.equal([2, 1, 0]);
      // A per-repository acknowledgement ahead of the feed is not moved back.
      expect(await store.inboxes.advanceAck(inboxKey(repositories[0]!), 2, 3)).to.equal(true);
      expect(await store.principalFeeds.acknowledge(principal, { throughSeq: 5 })).to.deep.equal({ ackSeq: 5, replayed: false });
      expect([await ackOf(0), await ackOf(1), await ackOf(2)]).to.deep.equal([3, 2, 1]);
      expect((await store.principalFeeds.find(principal))?.ackSeq).to.equal(5);
      // ... and a per-repository acknowledgement does not move the feed checkpoint.
      expect((await store.principalFeeds.listAfter(principal, 5, 10)).map((r) => [r.feedSeq, r.inboxAckSeq])).to.deep.equal([[6, 3]]);
    });

    it('answers a position at or behind the checkpoint as replayed, changing nothing', async function () {
      for (const i of [0, 1, 2]) created(await append(repositories[i]!));
      await store.principalFeeds.acknowledge(principal, { throughSeq: 2 });
      expect(await store.principalFeeds.acknowledge(principal, { throughSeq: 2 })).to.deep.equal({ ackSeq: 2, replayed: true });
      expect(await store.principalFeeds.acknowledge(principal, { throughSeq: 1, expectedSeq: 2 })).to.deep.equal({ ackSeq: 2, replayed: true });
      expect((await store.principalFeeds.find(principal))?.ackSeq).to.equal(2);
      expect((await store.inboxes.find(repositories[2]!))?.ackSeq).to.equal(0);
    });

    it('refuses a stale expected checkpoint, and one winner among racing moves from one checkpoint', async function () {
      for (const i of [0, 1, 2, 0, 1]) created(await append(repositories[i]!));
      expect(await rejection(store.principalFeeds.acknowledge(principal, { throughSeq: 2, expectedSeq: 1 }))).to.be.instanceOf(FeedCheckpointStaleError);
      const results = await Promise.allSettled([3, 4, 5, 3, 5, 4].map((throughSeq) => store.principalFeeds.acknowledge(principal, { throughSeq, expectedSeq: 0 })));
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(won).to.have.length(1);
      expect(won[0]!.replayed).to.equal(false);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).to.be.instanceOf(FeedCheckpointStaleError);
      expect((await store.principalFeeds.find(principal))?.ackSeq).to.equal(won[0]!.ackSeq);
      expect(await rejection(store.principalFeeds.acknowledge(principal, { throughSeq: 5, expectedSeq: 0 }))).to.be.instanceOf(FeedCheckpointStaleError);
    });

    it('refuses a position with no notification: 0, beyond the end, or a feed that does not exist', async function () {
      for (const i of [0, 1]) created(await append(repositories[i]!));
      for (const throughSeq of [0, 3, 1000]) {
        const err = await rejection(store.principalFeeds.acknowledge(principal, { throughSeq }));
        expect(err, String(throughSeq)).to.be.instanceOf(FeedPositionUnavailableError);
        expect(err).to.include({ feedKey: feedKey(principal), seq: throughSeq });
      }
      const stranger = { principalKind: 'human' as const, principalId: `u_${ulid()}` };
      expect(await rejection(store.principalFeeds.acknowledge(stranger, { throughSeq: 1 }))).to.be.instanceOf(FeedPositionUnavailableError);
      expect((await store.principalFeeds.find(principal))?.ackSeq).to.equal(0);
    });

    it('keeps the feed in commit order under many concurrent appends to several inboxes, while acknowledgements run', async function () {
      this.timeout(120_000);
      // Another handle with its own connections, as another notifier process would have (PostgreSQL).
      const other = target.name === 'postgres' ? await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 10 }) : null;
      const stores = other ? [store, createStore(other)] : [store];
      try {
        const total = 120;
        const snapshots: number[][] = [];
        let writing = true;
        // A reader that sees position k while k-1 is not visible yet would skip it for good.
        const reader = (async () => {
          while (writing) snapshots.push((await store.principalFeeds.listAfter(principal, 0, 1000)).map((r) => r.feedSeq));
        })();
        const acknowledger = (async () => {
          while (writing) {
            const feed = await store.principalFeeds.find(principal);
            if (feed && feed.lastSeq > feed.ackSeq) await store.principalFeeds.acknowledge(principal, { throughSeq: feed.lastSeq });
          }
        })();
        const appends = Array.from({ length: total }, (_, i) =>
          stores[i % stores.length]!.notifications.append(repositories[i % repositories.length]!, newNotification(), appendOptions()),
        );
        const outcomes = await Promise.all(appends);
        writing = false;
        await Promise.all([reader, acknowledger]);
        expect(outcomes.every((o) => o.kind === 'created')).to.equal(true);
        const rows = await store.principalFeeds.listAfter(principal, 0, 1000);
        expect(rows.map((r) => r.feedSeq)).to.deep.equal(Array.from({ length: total }, (_, i) => i + 1));
        // Within each inbox, the feed order is the inbox order.
        for (const owner of repositories) {
          const seqs = rows.filter((r) => r.repositoryId === owner.repositoryId).map((r) => r.seq);
          expect(seqs).to.deep.equal(Array.from({ length: seqs.length }, (_, i) => i + 1));
        }
        expect(snapshots.length).to.be.greaterThan(0);
        for (const seen of snapshots) expect(seen).to.deep.equal(Array.from({ length: seen.length }, (_, i) => i + 1));
        // Every inbox checkpoint agrees with the feed checkpoint.
        const feed = (await store.principalFeeds.find(principal))!;
        expect(feed.lastSeq).to.equal(total);
        for (const owner of repositories) {
          const acknowledged = rows.filter((r) => r.repositoryId === owner.repositoryId && r.feedSeq <= feed.ackSeq).map((r) => r.seq);
          expect((await store.inboxes.find(owner))!.ackSeq, owner.repositoryId).to.equal(Math.max(0, ...acknowledged));
        }
      } finally {
        await other?.close();
      }
    });
  });
}
