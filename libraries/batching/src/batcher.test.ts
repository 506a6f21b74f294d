import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { Batcher, type BatcherOptions } from './batcher.ts';
import { BatchDeadlineError, BatchQueueFullError } from './batcher-errors.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

interface Item {
  key: string;
  id: string;
}

/** A batcher whose batches are recorded and answered only when the test says so. */
function heldBatcher(options: BatcherOptions<Item> = {}) {
  const batches: Array<{ ids: string[]; answer(): void; fail(err: Error): void }> = [];
  let running = 0;
  let maxRunning = 0;
  const batcher = new Batcher<Item, string>(
    (items) =>
      new Promise((resolve, reject) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        const done = () => (running -= 1);
        batches.push({
          ids: items.map((i) => i.id),
          answer: () => (done(), resolve(items.map((i) => `out-${i.id}`))),
          fail: (err) => (done(), reject(err)),
        });
      }),
    options,
  );
  const submit = (key: string, id: string) => batcher.submit({ key, id });
  return { batcher, batches, submit, maxRunning: () => maxRunning, ids: () => batches.map((b) => b.ids) };
}

const outcome = (p: Promise<unknown>) => p.then((v) => v, (err: Error) => err);

describe('Batcher', () => {
  it('sends a lone item at once and the items queued behind a running batch as the next batch, up to maxBatch', async () => {
    const { batches, submit, ids } = heldBatcher({ maxBatch: 3 });
    const answers = ['1', '2', '3', '4', '5'].map((id) => submit('k', id));
    expect(ids()).to.deep.equal([['1']]);
    batches[0]!.answer();
    await tick();
    expect(ids()).to.deep.equal([['1'], ['2', '3', '4']]);
    batches[1]!.answer();
    await tick();
    batches[2]!.answer();
    expect(await Promise.all(answers)).to.deep.equal(['out-1', 'out-2', 'out-3', 'out-4', 'out-5']);
  });

  it('runs up to maxConcurrent batches at once', async () => {
    const { batches, submit, ids, maxRunning } = heldBatcher({ maxConcurrent: 2 });
    const answers = ['1', '2', '3', '4'].map((id) => submit('k', id));
    expect(ids()).to.deep.equal([['1'], ['2']]);
    batches[1]!.answer();
    await tick();
    expect(ids()).to.deep.equal([['1'], ['2'], ['3', '4']]);
    batches[0]!.answer();
    batches[2]!.answer();
    await Promise.all(answers);
    expect(maxRunning()).to.equal(2);
  });

  it('with keyOf, never runs a key in two batches at once and keeps each key in arrival order', async () => {
    const { batches, submit, maxRunning } = heldBatcher({ maxConcurrent: 3, maxBatch: 4, keyOf: (i) => i.key });
    const keys = ['A', 'B', 'A', 'A', 'C', 'B', 'D', 'A', 'E', 'B', 'A', 'F'];
    const answers = keys.map((key, i) => submit(key, `${key}${i}`));
    const seen = new Map<string, number[]>();
    let released = 0;
    for (;;) {
      await tick();
      const running = batches.slice(released);
      const keysRunning = running.flatMap((b) => [...new Set(b.ids.map((id) => id[0]))]);
      expect(new Set(keysRunning).size, 'a key in two running batches').to.equal(keysRunning.length);
      const next = batches[released];
      if (!next) break;
      expect(next.ids.length).to.be.at.most(4);
      for (const id of next.ids) seen.set(id[0]!, [...(seen.get(id[0]!) ?? []), Number(id.slice(1))]);
      next.answer();
      released += 1;
    }
    await Promise.all(answers);
    expect(maxRunning()).to.be.at.most(3);
    for (const [key, order] of seen) expect(order, key).to.deep.equal([...order].sort((a, b) => a - b));
    expect([...seen.values()].flat()).to.have.length(keys.length);
  });

  it('with startOnNextTurn, gathers every item of one event-loop turn into one batch, even when none runs', async () => {
    const batches: string[][] = [];
    const batcher = new Batcher<string, string>(
      async (items) => {
        batches.push(items);
        return items;
      },
      { startOnNextTurn: true },
    );
    const firstTurn = ['a', 'b', 'c'].map((id) => batcher.submit(id));
    expect(batches, 'nothing starts within the turn').to.have.length(0);
    await Promise.all(firstTurn);
    await Promise.all(['d', 'e'].map((id) => batcher.submit(id)));
    expect(batches).to.deep.equal([['a', 'b', 'c'], ['d', 'e']]);
  });

  it('opens another lane when a batch stalls, never for a key in the stalled batch, and caps batches in flight', async () => {
    const { batches, submit, ids } = heldBatcher({ stalledAfterMs: 20, maxInFlight: 2, keyOf: (i) => i.key });
    const slow = submit('A', '1');
    const queued = [submit('A', '2'), submit('B', '3')];
    await tick();
    expect(ids(), 'before the stall').to.deep.equal([['1']]);
    await sleep(40);
    expect(ids(), 'after the stall').to.deep.equal([['1'], ['3']]);
    const more = submit('C', '4');
    await sleep(40);
    expect(batches, 'two in flight, both stalled: the cap holds').to.have.length(2);
    batches[1]!.answer();
    await queued[1];
    await tick();
    expect(ids(), "a lane is free; A's next item still waits for A's batch").to.deep.equal([['1'], ['3'], ['4']]);
    batches[2]!.answer();
    batches[0]!.answer();
    await slow;
    await tick();
    expect(ids()).to.deep.equal([['1'], ['3'], ['4'], ['2']]);
    batches[3]!.answer();
    expect(await Promise.all([...queued, more])).to.deep.equal(['out-2', 'out-3', 'out-4']);
  });

  it('fails every item of a batch that throws, only the item answered with an Error, and items left unanswered', async () => {
    const batcher = new Batcher<string, string>(async (items) => {
      if (items.includes('boom')) throw new Error('gone');
      return items.filter((i) => i !== 'short').map((i) => (i === 'bad' ? new Error('bad item') : i));
    });
    const [ok, bad] = await Promise.all([outcome(batcher.submit('ok')), outcome(batcher.submit('bad'))]);
    expect(ok).to.equal('ok');
    expect((bad as Error).message).to.equal('bad item');
    expect(((await outcome(batcher.submit('boom'))) as Error).message).to.equal('gone');
    expect(((await outcome(batcher.submit('short'))) as Error).message).to.match(/answered 0 of 1/);
    expect(await batcher.submit('after')).to.equal('after');
  });

  it('reports the most items that waited at once since the previous reading, then starts over from those waiting now', async () => {
    const { batcher, batches, submit } = heldBatcher({ maxQueued: 8 });
    const first = [submit('k', 'running'), submit('k', 'q1'), submit('k', 'q2'), submit('k', 'q3')];
    expect(batcher.queueBound).to.equal(8);
    batches[0]!.answer();
    await tick();
    expect(batcher.queued, 'the next batch took the three').to.equal(0);
    expect(batcher.takePeakQueued()).to.equal(3);
    expect(batcher.takePeakQueued()).to.equal(0);
    const later = submit('k', 'q4');
    expect(batcher.takePeakQueued()).to.equal(1);
    expect(batcher.takePeakQueued(), 'still waiting').to.equal(1);
    batches[1]!.answer();
    await tick();
    batches[2]!.answer();
    expect(await Promise.all([...first, later])).to.deep.equal(['out-running', 'out-q1', 'out-q2', 'out-q3', 'out-q4']);
  });

  it('refuses items beyond maxQueued at once, and takes them again once the queue drains', async () => {
    const { batcher, batches, submit } = heldBatcher({ maxQueued: 2 });
    const accepted = [submit('k', 'running'), submit('k', 'q1'), submit('k', 'q2')];
    expect(batcher.queued).to.equal(2);
    const refused = await outcome(submit('k', 'q3'));
    expect(refused).to.be.instanceOf(BatchQueueFullError);
    expect((refused as Error).message).to.match(/2 items already wait/);
    batches[0]!.answer();
    await tick();
    expect(batcher.queued).to.equal(0);
    const later = submit('k', 'q4');
    batches[1]!.answer();
    await tick();
    batches[2]!.answer();
    expect(await Promise.all([...accepted, later])).to.deep.equal(['out-running', 'out-q1', 'out-q2', 'out-q4']);
  });

  it('answers an item past deadlineMs with the deadline error, counting the queue wait and the batch together', async () => {
    const { batches, submit } = heldBatcher({ deadlineMs: 400, deadlineError: (ms) => new Error(`late after ${ms}`) });
    const first = outcome(submit('k', 'first'));
    // Queues 300 ms behind `first`, then rides a batch that does not answer in time.
    const second = outcome(submit('k', 'second'));
    await sleep(300);
    batches[0]!.answer();
    expect(await first).to.equal('out-first');
    await tick();
    expect(batches.map((b) => b.ids)).to.deep.equal([['first'], ['second']]);
    const wentOut = Date.now();
    expect(((await second) as Error).message).to.equal('late after 400');
    // A deadline counted from the batch's start would have given it 400 ms more.
    expect(Date.now() - wentOut, 'what is left of the deadline, not a new one').to.be.below(380);
    // The late answer changes nothing, and the batcher goes on.
    batches[1]!.answer();
    const third = submit('k', 'third');
    await tick();
    batches[2]!.answer();
    expect(await third).to.equal('out-third');
  });

  it('drops a queued item at its deadline, so the batch that follows does not carry it', async () => {
    const { batcher, batches, submit } = heldBatcher({ deadlineMs: 30 });
    const running = outcome(submit('k', 'running'));
    const waiting = outcome(submit('k', 'waiting'));
    expect(await waiting).to.be.instanceOf(BatchDeadlineError);
    expect(batcher.queued).to.equal(0);
    const fresh = submit('k', 'fresh');
    batches[0]!.fail(new Error('too late anyway'));
    await running;
    await tick();
    expect(batches.map((b) => b.ids)).to.deep.equal([['running'], ['fresh']]);
    batches[1]!.answer();
    expect(await fresh).to.equal('out-fresh');
  });

  it('refuses nonsensical sizes', () => {
    expect(() => new Batcher(async () => [], { maxBatch: 0 })).to.throw(RangeError, /maxBatch/);
  });
});
