import { expect } from 'chai';
import { AppendBatcher } from './append-batcher.ts';
import type { StepOutcome, NewMessage, PendingAppend } from './message-append.types.ts';

const message = (idempotencyKey: string) => ({ idempotencyKey }) as NewMessage;
const options = { newRoomId: 'R', now: new Date(0) };
const scope = (room: string) => ({ repositoryId: room, branchId: null });

/** Drives the batcher with a commit that records its batches and is released by hand. */
function recordingBatcher(maxConcurrent: number, maxBatch = 64, stall: { stalledAfterMs?: number; maxInFlight?: number } = {}) {
  const batches: Array<{ items: PendingAppend[]; release: () => void }> = [];
  let running = 0;
  let maxRunning = 0;
  const batcher = new AppendBatcher(
    (items) =>
      new Promise<StepOutcome[]>((resolve) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        batches.push({
          items,
          release: () => {
            running -= 1;
            resolve(items.map(() => ({ kind: 'sealed' })));
          },
        });
      }),
    // Nothing stalls unless a test says so: these tests hold transactions for a few turns.
    { maxConcurrent, maxBatch, stalledAfterMs: 60_000, ...stall },
  );
  return { batcher, batches, maxRunning: () => maxRunning };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('AppendBatcher', () => {
  it('puts appends that queue behind a running transaction into one next transaction, across rooms', async () => {
    const { batcher, batches } = recordingBatcher(1);
    const done = [batcher.submit({ scope: scope('A'), step: 'append', message: message('1'), options, budget: undefined })];
    for (const [room, key] of [['B', '2'], ['C', '3'], ['A', '4'], ['B', '5']] as const) done.push(batcher.submit({ scope: scope(room), step: 'append', message: message(key), options, budget: undefined }));
    await tick();
    expect(batches).to.have.length(1);
    batches[0]!.release();
    await tick();
    expect(batches).to.have.length(2);
    expect(batches[1]!.items.map((i) => i.message.idempotencyKey)).to.deep.equal(['2', '3', '4', '5']);
    batches[1]!.release();
    expect(await Promise.all(done)).to.have.length(5);
  });

  it('never runs one room in two transactions at once and keeps each room in arrival order', async () => {
    const { batcher, batches, maxRunning } = recordingBatcher(3, 4);
    const done: Array<Promise<StepOutcome>> = [];
    const rooms = ['A', 'B', 'A', 'A', 'C', 'B', 'D', 'A', 'E', 'B', 'A', 'F'];
    rooms.forEach((room, i) => done.push(batcher.submit({ scope: scope(room), step: 'append', message: message(`${room}${i}`), options, budget: undefined })));
    const seen = new Map<string, number[]>();
    let released = 0;
    while (released < batches.length || released === 0) {
      await tick();
      const running = batches.slice(released);
      const roomsRunning = running.flatMap((b) => [...new Set(b.items.map((i) => i.scope.repositoryId))]);
      expect(new Set(roomsRunning).size, 'a room in two running transactions').to.equal(roomsRunning.length);
      expect(running.length).to.be.at.most(3);
      const next = batches[released];
      if (!next) break;
      expect(next.items.length).to.be.at.most(4);
      for (const item of next.items) {
        const order = seen.get(item.scope.repositoryId) ?? [];
        order.push(Number(item.message.idempotencyKey.slice(1)));
        seen.set(item.scope.repositoryId, order);
      }
      next.release();
      released += 1;
    }
    await Promise.all(done);
    expect(maxRunning()).to.be.at.most(3);
    for (const [room, order] of seen) {
      expect(order, room).to.deep.equal([...order].sort((a, b) => a - b));
    }
    expect([...seen.values()].flat()).to.have.length(rooms.length);
  });

  it('fails every caller of a failed transaction and goes on with the next', async () => {
    let calls = 0;
    const batcher = new AppendBatcher(async (items) => {
      calls += 1;
      if (calls === 1) throw new Error('database gone');
      return items.map(() => ({ kind: 'sealed' }) as StepOutcome);
    });
    const first = batcher.submit({ scope: scope('A'), step: 'append', message: message('1'), options, budget: undefined });
    const second = batcher.submit({ scope: scope('A'), step: 'append', message: message('2'), options, budget: undefined });
    expect(await first.then(() => 'ok', (err: Error) => err.message)).to.equal('database gone');
    expect(await second).to.deep.equal({ kind: 'sealed' });
  });

  it('with startOnNextTurn, gathers every append of one event-loop turn into one transaction, even when none runs', async () => {
    const batches: PendingAppend[][] = [];
    const batcher = new AppendBatcher(
      async (items) => {
        batches.push(items);
        return items.map(() => ({ kind: 'sealed' }) as StepOutcome);
      },
      { maxConcurrent: 1, startOnNextTurn: true },
    );
    const firstTurn = ['A', 'B', 'A'].map((room, i) => batcher.submit({ scope: scope(room), step: 'append', message: message(`1-${i}`), options, budget: undefined }));
    expect(batches, 'nothing starts within the turn').to.have.length(0);
    await Promise.all(firstTurn);
    const secondTurn = ['C', 'A'].map((room, i) => batcher.submit({ scope: scope(room), step: 'append', message: message(`2-${i}`), options, budget: undefined }));
    await Promise.all(secondTurn);
    expect(batches.map((b) => b.map((i) => i.message.idempotencyKey))).to.deep.equal([['1-0', '1-1', '1-2'], ['2-0', '2-1']]);
  });

  it('lets other rooms past a stalled transaction, never its own room, and caps transactions in flight', async () => {
    const { batcher, batches } = recordingBatcher(1, 64, { stalledAfterMs: 20, maxInFlight: 2 });
    const slow = batcher.submit({ scope: scope('A'), step: 'append', message: message('1'), options, budget: undefined });
    const queued = [['A', '2'], ['B', '3']].map(([room, key]) => batcher.submit({ scope: scope(room!), step: 'append', message: message(key!), options, budget: undefined }));
    await tick();
    expect(batches, 'before the stall').to.have.length(1);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(batches.map((b) => b.items.map((i) => i.message.idempotencyKey)), 'after the stall').to.deep.equal([['1'], ['3']]);
    const more = batcher.submit({ scope: scope('C'), step: 'append', message: message('4'), options, budget: undefined });
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(batches, 'two in flight, both stalled: the cap holds').to.have.length(2);
    batches[1]!.release();
    await queued[1];
    await tick();
    // A lane is free again; room A's next append still waits for A's stalled transaction.
    expect(batches.map((b) => b.items.map((i) => i.message.idempotencyKey))).to.deep.equal([['1'], ['3'], ['4']]);
    batches[2]!.release();
    batches[0]!.release();
    await slow;
    await tick();
    expect(batches.map((b) => b.items.map((i) => i.message.idempotencyKey))).to.deep.equal([['1'], ['3'], ['4'], ['2']]);
    batches[3]!.release();
    await Promise.all([...queued, more]);
  });

  it('without startOnNextTurn, an append to an idle batcher starts at once', async () => {
    const { batcher, batches } = recordingBatcher(1);
    const done = batcher.submit({ scope: scope('A'), step: 'append', message: message('1'), options, budget: undefined });
    expect(batches).to.have.length(1);
    batches[0]!.release();
    await done;
  });
});
