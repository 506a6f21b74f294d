import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../test/new-message.ts';
import { testTargets } from '../test/targets.ts';
import { createStore, type AppendOutcome, type AppendRateBudget, type RoomScope, type Store } from './index.ts';

let senders = 0;
/** A budget of a sender no other test uses, in the current minute. */
function budgetFor(scope: RoomScope | '*', limit: number): AppendRateBudget {
  senders += 1;
  const roomKey = scope === '*' ? '*' : `repo:${scope.repositoryId}`;
  return { senderKind: 'user', senderId: `u_rate_${process.pid}_${Date.now()}_${senders}`, roomKey, windowStartMs: Math.floor(Date.now() / 60_000) * 60_000, limit };
}

const kinds = (outcomes: AppendOutcome[]) => outcomes.map((o) => o.kind);

for (const target of testTargets) {
  describe(`appends under a rate budget on ${target.name} (chat_append_messages_v3)`, function () {
    this.timeout(60_000);
    let store: Store;
    let cleanup: () => Promise<void>;
    let scope: RoomScope;

    before(async () => {
      const opened = await target.open();
      store = createStore(opened.database);
      cleanup = opened.cleanup;
    });
    after(async () => cleanup());
    beforeEach(() => {
      scope = { repositoryId: ulid(), branchId: null };
    });

    const append = (budget: AppendRateBudget, key?: string, where = scope) =>
      store.messages.append(where, newMessage({ senderId: budget.senderId, authorizingSubjectId: budget.senderId, ...(key ? { idempotencyKey: key } : {}) }), { newRoomId: ulid(), now: new Date(), rate: budget });

    it('takes a unit per created message in the append itself, and past the limit appends nothing', async () => {
      const budget = budgetFor(scope, 3);
      for (let i = 0; i < 3; i++) expect((await append(budget)).kind).to.equal('created');
      expect((await append(budget)).kind).to.equal('rate_limited');
      expect((await store.rooms.find(scope))?.lastSeq).to.equal(3);
      expect(await store.rateWindows.take(budget)).to.equal(false);
    });

    it('answers an exact retry as a replay, taking no unit, also once the budget is spent', async () => {
      const budget = budgetFor(scope, 2);
      const key = ulid();
      expect((await append(budget, key)).kind).to.equal('created');
      expect((await append(budget, key)).kind).to.equal('replayed');
      expect((await append(budget)).kind).to.equal('created');
      expect((await append(budget, key)).kind).to.equal('replayed');
      expect((await append(budget)).kind).to.equal('rate_limited');
    });

    it('gives a unit that a replay in the same batch returned to a later append of that batch', async () => {
      const budget = budgetFor(scope, 2);
      const key = ulid();
      expect((await append(budget, key)).kind).to.equal('created');
      // One batch: the retry takes the last unit first, finds its key and gives the unit back; the
      // new append, refused when the batch took its units, gets that unit.
      const [retry, fresh] = await Promise.all([append(budget, key), append(budget)]);
      expect([retry.kind, fresh.kind]).to.deep.equal(['replayed', 'created']);
      expect((await append(budget)).kind).to.equal('rate_limited');
    });

    it('takes no unit for an append into a sealed room', async () => {
      const budget = budgetFor(scope, 2);
      expect((await append(budget)).kind).to.equal('created');
      await store.rooms.seal(scope, new Date());
      expect((await append(budget)).kind).to.equal('sealed');
      expect(await store.rateWindows.take(budget)).to.equal(true);
      expect(await store.rateWindows.take(budget)).to.equal(false);
    });

    it('counts nothing for an append without a budget (its unit was taken before)', async () => {
      const budget = budgetFor(scope, 1);
      expect(await store.rateWindows.take(budget)).to.equal(true);
      const outcome = await store.messages.append(scope, newMessage({ senderId: budget.senderId, authorizingSubjectId: budget.senderId }), { newRoomId: ulid(), now: new Date() });
      expect(outcome.kind).to.equal('created');
      expect(await store.rateWindows.take(budget)).to.equal(false);
    });

    it('lets exactly `limit` of many appends batched together through, in one room and across rooms, with seqs contiguous', async () => {
      const budget = budgetFor(scope, 4);
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => append(budget)));
      expect(kinds(outcomes).filter((k) => k === 'created')).to.have.length(4);
      expect(kinds(outcomes).filter((k) => k === 'rate_limited')).to.have.length(6);
      expect((await store.rooms.find(scope))?.lastSeq).to.equal(4);

      const rooms = Array.from({ length: 5 }, () => ({ repositoryId: ulid(), branchId: null }));
      const across = budgetFor('*', 3);
      const spread = await Promise.all(Array.from({ length: 15 }, (_, i) => append(across, undefined, rooms[i % 5])));
      expect(kinds(spread).filter((k) => k === 'created')).to.have.length(3);
      expect(kinds(spread).filter((k) => k === 'rate_limited')).to.have.length(12);
    });

    if (target.name === 'postgres') {
      it('lets exactly `limit` through when four processes race appends into one budget across rooms, without a deadlock', async function () {
        const budget = budgetFor('*', 25);
        const rooms = Array.from({ length: 6 }, () => ulid());
        const script = fileURLToPath(new URL('../test/append-under-budget.ts', import.meta.url));
        const runs = await Promise.all(
          Array.from({ length: 4 }, () => runScript(script, [budget.senderId, rooms.join(','), String(budget.windowStartMs), '25', '20'])),
        );
        const all = runs.flat();
        expect(all).to.have.length(80);
        expect(all.filter((k) => k === 'created')).to.have.length(25);
        expect(all.filter((k) => k === 'rate_limited')).to.have.length(55);
        let stored = 0;
        for (const repositoryId of rooms) {
          const room = await store.rooms.find({ repositoryId, branchId: null });
          const seqs = room ? (await store.messages.listAfter(room.roomId, 0, 100)).map((m) => m.seq) : [];
          expect(seqs).to.deep.equal(Array.from({ length: seqs.length }, (_, i) => i + 1));
          stored += seqs.length;
        }
        expect(stored).to.equal(25);
      });
    }
  });
}

/** Runs a test script in its own Node process and returns the JSON its last line holds. */
function runScript(script: string, args: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`${script} exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!) as string[]);
    });
  });
}
