import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../test/new-message.ts';
import { testTargets } from '../test/targets.ts';
import { createStore, placeBudget, type AppendOutcome, type AppendRateLimit, type HoldOutcome, type RoomScope, type Store } from './index.ts';

let senders = 0;
/** A sender no other test uses. */
function freshSender(senderKind: 'user' | 'bot' = 'user') {
  senders += 1;
  return { senderKind, senderId: `${senderKind === 'user' ? 'u' : 'b'}_rate_${process.pid}_${Date.now()}_${senders}` } as const;
}

/** The start of a window far from any other test's windows, so budgets never meet across runs. */
function windowStart(windowSeconds: number): number {
  const windowMs = windowSeconds * 1000;
  return (Math.floor(Date.now() / windowMs) + 1 + Math.floor(Math.random() * 1_000_000)) * windowMs;
}

/** A window long enough that no test's appends fall on both sides of a window's end. */
const ONE_WINDOW = 10 * 365 * 86_400;

const newScope = (): RoomScope => ({ repositoryId: ulid(), branchId: null });
const kinds = (outcomes: Array<AppendOutcome | HoldOutcome>) => outcomes.map((o) => o.kind);
const count = (outcomes: Array<AppendOutcome | HoldOutcome>, kind: string) => kinds(outcomes).filter((k) => k === kind).length;

describe('placeBudget', () => {
  const sender = { senderKind: 'user', senderId: 'u_alice' } as const;

  it('places a budget per sender and room, or per sender across rooms, in the aligned window holding the moment', () => {
    const start = 1_700_000_000_000 - (1_700_000_000_000 % 10_000);
    const perRoom = placeBudget({ limit: 3, windowSeconds: 10, per: 'sender-room' }, sender, 'repo:R', start + 2_500);
    expect(perRoom).to.deep.equal({
      budget: { senderKind: 'user', senderId: 'u_alice', roomKey: 'repo:R', windowStartMs: start, limit: 3 },
      retryAfterMs: 7_500,
    });
    expect(placeBudget({ limit: 3, windowSeconds: 10, per: 'sender' }, sender, 'repo:R', start).budget.roomKey).to.equal('*');
  });

  it('leaves at least 1 ms to wait, never 0', () => {
    expect(placeBudget({ limit: 1, windowSeconds: 5, per: 'sender' }, sender, 'repo:R', 4_999).retryAfterMs).to.equal(1);
  });
});

for (const target of testTargets) {
  describe(`the append rate window on ${target.name} (chat_append_messages_v4)`, function () {
    this.timeout(60_000);
    let store: Store;
    let cleanup: () => Promise<void>;

    before(async () => {
      const opened = await target.open();
      store = createStore(opened.database);
      cleanup = opened.cleanup;
    });
    after(async () => cleanup());

    type Sender = ReturnType<typeof freshSender>;
    const message = (sender: Sender, key?: string) =>
      newMessage({ ...sender, authorizingSubjectId: sender.senderId, ...(key ? { idempotencyKey: key } : {}) });
    const append = (rate: AppendRateLimit, sender: Sender, scope: RoomScope, nowMs = Date.now(), key?: string) =>
      store.messages.append(scope, message(sender, key), { newRoomId: ulid(), now: new Date(nowMs), rateLimit: rate });
    const hold = (rate: AppendRateLimit, sender: Sender, scope: RoomScope, nowMs = Date.now(), key?: string) =>
      store.messages.hold(scope, message(sender, key), { newRoomId: ulid(), now: new Date(nowMs), rateLimit: rate });

    it('takes a unit per created message in the append itself, and past the limit appends nothing and says how long to wait', async () => {
      const rate: AppendRateLimit = { limit: 3, windowSeconds: 10, per: 'sender-room' };
      const start = windowStart(10);
      const [sender, scope] = [freshSender(), newScope()];
      for (let i = 0; i < 3; i++) expect((await append(rate, sender, scope, start + 2_500)).kind).to.equal('created');
      expect(await append(rate, sender, scope, start + 2_500)).to.deep.equal({ kind: 'rate_limited', retryAfterMs: 7_500 });
      expect((await store.rooms.find(scope))?.lastSeq).to.equal(3);
      expect((await hold(rate, sender, scope, start + 2_500)).kind).to.equal('rate_limited');
    });

    it('answers an exact retry as a replay, taking no unit, also once the budget is spent', async () => {
      const rate: AppendRateLimit = { limit: 2, windowSeconds: ONE_WINDOW, per: 'sender-room' };
      const [sender, scope, key] = [freshSender(), newScope(), ulid()];
      expect((await append(rate, sender, scope, Date.now(), key)).kind).to.equal('created');
      expect((await append(rate, sender, scope, Date.now(), key)).kind).to.equal('replayed');
      expect((await append(rate, sender, scope)).kind).to.equal('created');
      expect((await append(rate, sender, scope, Date.now(), key)).kind).to.equal('replayed');
      expect((await hold(rate, sender, scope, Date.now(), key)).kind).to.equal('replayed');
      expect((await append(rate, sender, scope)).kind).to.equal('rate_limited');
    });

    it('gives a unit that a replay in the same batch returned to a later append of that batch', async () => {
      const rate: AppendRateLimit = { limit: 2, windowSeconds: ONE_WINDOW, per: 'sender-room' };
      const [sender, scope, key] = [freshSender(), newScope(), ulid()];
      expect((await append(rate, sender, scope, Date.now(), key)).kind).to.equal('created');
      // One batch: the retry takes the last unit first, finds its key and gives the unit back; the
      // new append, refused when the batch took its units, gets that unit.
      const [retry, fresh] = await Promise.all([append(rate, sender, scope, Date.now(), key), append(rate, sender, scope)]);
      expect([retry.kind, fresh.kind]).to.deep.equal(['replayed', 'created']);
      expect((await append(rate, sender, scope)).kind).to.equal('rate_limited');
    });

    it('takes no unit for an append into a sealed room, and records a seal core reports before answering a retry', async () => {
      const rate: AppendRateLimit = { limit: 2, windowSeconds: ONE_WINDOW, per: 'sender-room' };
      const [sender, scope, key] = [freshSender(), newScope(), ulid()];
      expect((await append(rate, sender, scope, Date.now(), key)).kind).to.equal('created');
      const sealed = await store.messages.append(scope, message(sender), { newRoomId: ulid(), now: new Date(), rateLimit: rate, sealedByCore: true });
      expect(sealed.kind).to.equal('sealed');
      expect((await store.rooms.find(scope))?.state).to.equal('sealed');
      expect((await append(rate, sender, scope, Date.now(), key)).kind).to.equal('replayed');
      expect((await append(rate, sender, scope)).kind).to.equal('sealed');
      // One unit was taken, by the first append: the budget of another room under `sender` shows it.
      const across: AppendRateLimit = { ...rate, per: 'sender' };
      expect((await append(across, sender, newScope())).kind).to.equal('created');
    });

    it('answers an append core calls sealed into a room nobody wrote to as sealed, without creating the room or taking a unit', async () => {
      const rate: AppendRateLimit = { limit: 1, windowSeconds: ONE_WINDOW, per: 'sender' };
      const [sender, scope] = [freshSender(), newScope()];
      const sealed = await store.messages.append(scope, message(sender), { newRoomId: ulid(), now: new Date(), rateLimit: rate, sealedByCore: true });
      expect(sealed.kind).to.equal('sealed');
      expect(await store.rooms.find(scope)).to.equal(null);
      expect((await append(rate, sender, newScope())).kind).to.equal('created');
    });

    it('holds a unit for an append that checks more first; the append takes no second one, and a release gives it back once', async () => {
      const rate: AppendRateLimit = { limit: 2, windowSeconds: ONE_WINDOW, per: 'sender-room' };
      const [sender, scope] = [freshSender(), newScope()];
      const first = await hold(rate, sender, scope);
      if (first.kind !== 'held') throw new Error(`expected held, got ${first.kind}`);
      const stored = await store.messages.append(scope, message(sender), { newRoomId: ulid(), now: new Date(), hold: first.hold });
      expect(stored.kind).to.equal('created');
      const second = await hold(rate, sender, scope);
      if (second.kind !== 'held') throw new Error(`expected held, got ${second.kind}`);
      expect((await hold(rate, sender, scope)).kind).to.equal('rate_limited');
      await second.hold.release();
      await second.hold.release();
      expect((await hold(rate, sender, scope)).kind).to.equal('held');
      expect((await hold(rate, sender, scope)).kind).to.equal('rate_limited');
    });

    it('gives a held unit back when its append turns out a retry of one that committed first', async () => {
      const rate: AppendRateLimit = { limit: 2, windowSeconds: ONE_WINDOW, per: 'sender-room' };
      const [sender, scope, key] = [freshSender(), newScope(), ulid()];
      const held = await hold(rate, sender, scope, Date.now(), key);
      if (held.kind !== 'held') throw new Error(`expected held, got ${held.kind}`);
      expect((await append(rate, sender, scope, Date.now(), key)).kind).to.equal('created');
      const late = await store.messages.append(scope, message(sender, key), { newRoomId: ulid(), now: new Date(), hold: held.hold });
      expect(late.kind).to.equal('replayed');
      expect((await append(rate, sender, scope)).kind).to.equal('created');
      expect((await append(rate, sender, scope)).kind).to.equal('rate_limited');
    });

    it('starts a fresh budget when the next aligned window begins', async () => {
      const rate: AppendRateLimit = { limit: 2, windowSeconds: 10, per: 'sender-room' };
      const start = windowStart(10);
      const [sender, scope] = [freshSender(), newScope()];
      await hold(rate, sender, scope, start + 9_000);
      await hold(rate, sender, scope, start + 9_000);
      expect((await hold(rate, sender, scope, start + 9_999)).kind).to.equal('rate_limited');
      expect((await hold(rate, sender, scope, start + 10_000)).kind).to.equal('held');
      expect((await hold(rate, sender, scope, start + 10_000)).kind).to.equal('held');
      expect(await hold(rate, sender, scope, start + 10_000)).to.deep.equal({ kind: 'rate_limited', retryAfterMs: 10_000 });
    });

    it('counts a request from a clock that is behind in the newest window its budget has seen', async () => {
      const rate: AppendRateLimit = { limit: 2, windowSeconds: 10, per: 'sender-room' };
      const start = windowStart(10);
      const [sender, scope] = [freshSender(), newScope()];
      await hold(rate, sender, scope, start + 10_500);
      // Another instance, a second behind, still in the window before: it counts in the newer one.
      await hold(rate, sender, scope, start + 9_500);
      expect((await hold(rate, sender, scope, start + 10_600)).kind).to.equal('rate_limited');
      expect((await hold(rate, sender, scope, start + 9_600)).kind).to.equal('rate_limited');
    });

    it('per sender-room, gives each sender a budget per room, and users and bots separate budgets', async () => {
      const rate: AppendRateLimit = { limit: 1, windowSeconds: ONE_WINDOW, per: 'sender-room' };
      const [sender, scope] = [freshSender(), newScope()];
      expect((await hold(rate, sender, scope)).kind).to.equal('held');
      expect((await hold(rate, sender, scope)).kind).to.equal('rate_limited');
      expect((await hold(rate, sender, { ...scope, branchId: 'main' })).kind).to.equal('held');
      expect((await hold(rate, { senderKind: 'bot', senderId: sender.senderId }, scope)).kind).to.equal('held');
      expect((await hold(rate, freshSender(), scope)).kind).to.equal('held');
    });

    it('lets exactly `limit` of many appends batched together through, in one room and across rooms, with seqs contiguous', async () => {
      const [sender, scope] = [freshSender(), newScope()];
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => append({ limit: 4, windowSeconds: ONE_WINDOW, per: 'sender-room' }, sender, scope)));
      expect(count(outcomes, 'created')).to.equal(4);
      expect(count(outcomes, 'rate_limited')).to.equal(6);
      expect((await store.rooms.find(scope))?.lastSeq).to.equal(4);

      const rooms = Array.from({ length: 5 }, newScope);
      const across = freshSender();
      const spread = await Promise.all(Array.from({ length: 15 }, (_, i) => append({ limit: 3, windowSeconds: ONE_WINDOW, per: 'sender' }, across, rooms[i % 5]!)));
      expect(count(spread, 'created')).to.equal(3);
      expect(count(spread, 'rate_limited')).to.equal(12);
    });

    it('lets exactly `limit` holds through when many race in one window, and frees exactly the units released', async () => {
      const rate: AppendRateLimit = { limit: 10, windowSeconds: ONE_WINDOW, per: 'sender-room' };
      const [sender, scope] = [freshSender(), newScope()];
      const outcomes = await Promise.all(Array.from({ length: 40 }, () => hold(rate, sender, scope)));
      const held = outcomes.flatMap((o) => (o.kind === 'held' ? [o.hold] : []));
      expect(held).to.have.length(10);
      expect(count(outcomes, 'rate_limited')).to.equal(30);
      await Promise.all(held.slice(0, 5).map((h) => h.release()));
      const again = await Promise.all(Array.from({ length: 8 }, () => hold(rate, sender, scope)));
      expect(count(again, 'held')).to.equal(5);
    });

    it('never moves a released unit into a later window, nor into another budget', async () => {
      const rate: AppendRateLimit = { limit: 1, windowSeconds: 60, per: 'sender-room' };
      const start = windowStart(60);
      const [sender, other, scope] = [freshSender(), freshSender(), newScope()];
      const old = await hold(rate, sender, scope, start + 58_500);
      const others = await hold(rate, other, scope, start + 58_500);
      await hold(rate, sender, scope, start + 60_000);
      if (old.kind !== 'held' || others.kind !== 'held') throw new Error('expected both held');
      await old.hold.release();
      expect((await hold(rate, sender, scope, start + 60_000)).kind).to.equal('rate_limited');
      await others.hold.release();
      expect((await hold(rate, sender, scope, start + 60_000)).kind).to.equal('rate_limited');
    });

    // On the embedded database only: a sweep on the shared PostgreSQL would take other suites' rows.
    if (target.name === 'pglite') {
      it('sweeps the rows of ended windows and keeps the current ones', async () => {
        const rate: AppendRateLimit = { limit: 1, windowSeconds: 60, per: 'sender-room' };
        const start = windowStart(60);
        const [ended, current, scope] = [freshSender(), freshSender(), newScope()];
        await hold(rate, ended, scope, start + 1_000);
        await hold(rate, current, scope, start + 61_000);
        expect(await store.rateWindows.sweepEnded(rate, start + 61_000, 1)).to.be.at.least(1);
        // The ended window's row went, so its budget starts afresh even from its old window's clock.
        expect((await hold(rate, ended, scope, start + 1_000)).kind).to.equal('held');
        expect((await hold(rate, current, scope, start + 61_000)).kind).to.equal('rate_limited');
      });
    }

    if (target.name === 'postgres') {
      it('lets exactly `limit` through when four processes race appends into one budget across rooms, without a deadlock', async function () {
        const sender = freshSender('bot');
        const rooms = Array.from({ length: 6 }, () => ulid());
        const script = fileURLToPath(new URL('../test/append-under-budget.ts', import.meta.url));
        const runs = await Promise.all(Array.from({ length: 4 }, () => runScript(script, [sender.senderId, rooms.join(','), '25', '20'])));
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
