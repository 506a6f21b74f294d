import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../test/new-message.ts';
import { testTargets } from '../test/targets.ts';
import { createStore, FanoutSettledError, inboxKey, type FanoutRunMessage, type InboxOwner, type MessageRow, type Store } from './index.ts';

const runOptions = () => ({ now: new Date(), outboxPayload: (n: { notificationId: string }) => JSON.stringify({ id: n.notificationId }) });

/** Appends a message that mentions someone into the room of `scope`, which records its fan-out row. */
async function mentionMessage(store: Store, scope: { repositoryId: string; branchId: string | null }): Promise<MessageRow> {
  const outcome = await store.messages.append(
    scope,
    newMessage({ bodyMarkdown: '@bob', bodyBytes: 4, renderedHtml: '<p>@bob</p>', mentions: [{ principalKind: 'human', principalId: 'u_bob', startByte: 0, endByte: 4 }] }),
    { newRoomId: ulid(), now: new Date() },
  );
  if (outcome.kind !== 'created') throw new Error('expected created');
  return outcome.message;
}

/** A run entry for `message`, notifying `owners` in that order. */
function runEntry(message: MessageRow, owners: InboxOwner[], feedMessage?: string): FanoutRunMessage {
  return {
    messageId: message.messageId,
    notifications: owners.map((owner) => ({
      owner,
      input: { messageId: message.messageId, roomId: message.roomId, branchId: message.branchId, senderKind: 'user', senderId: 'u_alice', spans: [{ startByte: 0, endByte: 4 }] },
    })),
    ...(feedMessage === undefined ? {} : { feedMessage }),
  };
}

for (const target of testTargets) {
  describe(`fan-out runs on ${target.name}`, function () {
    let store: Store;
    let cleanup: () => Promise<void>;
    let repositoryId: string;
    const human = (principalId: string): InboxOwner => ({ repositoryId, principalKind: 'human', principalId });
    const messagesOf = (owner: InboxOwner) => store.notifications.listAfter(inboxKey(owner), 0, 1000);

    before(async function () {
      const opened = await target.open();
      store = createStore(opened.database);
      cleanup = opened.cleanup;
    });
    after(async () => cleanup());
    beforeEach(() => {
      repositoryId = ulid();
    });

    it("writes a run of a room's messages in one go, each inbox and feed in message order, and removes their fan-out rows", async function () {
      const scope = { repositoryId, branchId: null };
      const [m1, m2, m3] = [await mentionMessage(store, scope), await mentionMessage(store, scope), await mentionMessage(store, scope)] as [MessageRow, MessageRow, MessageRow];
      const bob = human(`u_bob_${ulid()}`);
      const carol = human(`u_carol_${ulid()}`);
      const outcome = await store.notifications.appendFanoutRun(
        [runEntry(m1, [bob, carol], '{"m":1}'), runEntry(m2, [carol]), runEntry(m3, [carol, bob], '{"m":3}')],
        runOptions(),
      );
      expect(outcome.settled).to.deep.equal([m1.messageId, m2.messageId, m3.messageId]);
      expect(outcome.created.map((c) => [c.notification.messageId, c.notification.targetId])).to.deep.equal([
        [m1.messageId, bob.principalId],
        [m1.messageId, carol.principalId],
        [m2.messageId, carol.principalId],
        [m3.messageId, carol.principalId],
        [m3.messageId, bob.principalId],
      ]);
      for (const id of [m1, m2, m3].map((m) => m.messageId)) expect(await store.mentionFanout.find(id), `fan-out row of ${id}`).to.equal(null);

      const carolInbox = await messagesOf(carol);
      expect(carolInbox.map((n) => [n.seq, n.messageId])).to.deep.equal([[1, m1.messageId], [2, m2.messageId], [3, m3.messageId]]);
      expect(carolInbox.map((n) => n.feedSeq)).to.deep.equal([1, 2, 3]);
      const bobInbox = await messagesOf(bob);
      expect(bobInbox.map((n) => [n.seq, n.messageId, n.feedSeq])).to.deep.equal([[1, m1.messageId, 1], [2, m3.messageId, 2]]);
      // Notification IDs follow each inbox's order, and each feed entry carries its message when given.
      expect(carolInbox.map((n) => n.notificationId)).to.deep.equal(carolInbox.map((n) => n.notificationId).sort());
      const carolFeed = outcome.created.filter((c) => c.notification.targetId === carol.principalId).map((c) => JSON.parse(c.feed.payload) as { message?: unknown });
      expect(carolFeed.map((p) => p.message)).to.deep.equal([{ m: 1 }, undefined, { m: 3 }]);
    });

    it('writes nothing, and leaves every row, when a message of the run was settled by another worker', async function () {
      const scope = { repositoryId, branchId: null };
      const [m1, m2, m3] = [await mentionMessage(store, scope), await mentionMessage(store, scope), await mentionMessage(store, scope)] as [MessageRow, MessageRow, MessageRow];
      await store.mentionFanout.complete(m2.messageId);
      const bob = human(`u_bob_${ulid()}`);
      const thrown = await store.notifications.appendFanoutRun([runEntry(m1, [bob]), runEntry(m2, [bob]), runEntry(m3, [bob])], runOptions()).catch((err: unknown) => err);
      expect(thrown).to.be.instanceOf(FanoutSettledError);
      expect((thrown as FanoutSettledError).messageId).to.equal(m2.messageId);
      expect(await messagesOf(bob)).to.deep.equal([]);
      expect(await store.mentionFanout.find(m1.messageId)).to.not.equal(null);
      expect(await store.mentionFanout.find(m3.messageId)).to.not.equal(null);
    });

    it('runs of two rooms of one repository naming the same targets in opposite orders, written at once, never wait on each other for good; every inbox and feed stays contiguous', async function () {
      const rooms = [{ repositoryId, branchId: null }, { repositoryId, branchId: `b_${ulid()}` }];
      const people = [human(`u_a_${ulid()}`), human(`u_b_${ulid()}`), human(`u_c_${ulid()}`)];
      const runs: FanoutRunMessage[][] = [];
      for (const [index, scope] of rooms.entries()) {
        const order = index === 0 ? people : [...people].reverse();
        for (let r = 0; r < 6; r += 1) {
          const run: FanoutRunMessage[] = [];
          for (let m = 0; m < 3; m += 1) run.push(runEntry(await mentionMessage(store, scope), order));
          runs.push(run);
        }
      }
      // Each room's runs in its order, the two rooms side by side.
      const byRoom = [runs.slice(0, 6), runs.slice(6)];
      await Promise.all(byRoom.map(async (roomRuns) => {
        for (const run of roomRuns) await store.notifications.appendFanoutRun(run, runOptions());
      }));
      for (const person of people) {
        const inbox = await messagesOf(person);
        expect(inbox.map((n) => n.seq)).to.deep.equal(Array.from({ length: 36 }, (_, i) => i + 1));
        expect(inbox.map((n) => n.feedSeq!).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 36 }, (_, i) => i + 1));
        // Within each room, the inbox follows message order.
        for (const roomRuns of byRoom) {
          const order = roomRuns.flat().map((m) => m.messageId);
          expect(inbox.map((n) => n.messageId).filter((id) => order.includes(id))).to.deep.equal(order);
        }
      }
    });
  });
}
