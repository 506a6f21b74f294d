import { expect } from 'chai';
import { FanoutQueue } from './fanout-queue.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FanoutQueue (live deliveries in slices)', () => {
  it('delivers a small fanout at once, in the same turn', () => {
    const got: string[] = [];
    const queue = new FanoutQueue<string, number>((target, event) => got.push(`${target}:${event}`), 4);
    queue.push(['a', 'b', 'c'], 1);
    expect(got).to.deep.equal(['a:1', 'b:1', 'c:1']);
    expect(queue.backlog).to.equal(0);
  });

  it('makes at most one slice of deliveries per turn, letting other work in between', async () => {
    const got: Array<string> = [];
    const queue = new FanoutQueue<number, string>((target, event) => got.push(`${event}${target}`), 3);
    const targets = [1, 2, 3, 4, 5, 6, 7];
    queue.push(targets, 'x');
    expect(got).to.deep.equal(['x1', 'x2', 'x3']);
    expect(queue.backlog).to.equal(4);
    // I/O callbacks and other immediates queued now run before the next slice.
    setImmediate(() => got.push('other work'));
    await turn();
    await turn();
    expect(got.indexOf('other work'), 'other work ran between slices').to.be.within(3, 6);
    while (queue.backlog > 0) await turn();
    expect(got.filter((g) => g !== 'other work')).to.deep.equal(targets.map((t) => `x${t}`));
  });

  it('tells once per event that it reached every target, after the last of them, across slices', async () => {
    const got: string[] = [];
    const queue = new FanoutQueue<number, string>((target, event) => got.push(`${event}${target}`), 3, undefined, (event, targets) => got.push(`${event} settled on ${targets.length}`));
    queue.push([1, 2, 3, 4, 5], 'x');
    queue.push([1], 'y');
    expect(got).to.deep.equal(['x1', 'x2', 'x3']);
    while (queue.backlog > 0) await turn();
    expect(got).to.deep.equal(['x1', 'x2', 'x3', 'x4', 'x5', 'x settled on 5', 'y1', 'y settled on 1']);
  });

  it('keeps every target’s events in the order they were queued, across slices and jobs', async () => {
    const byTarget = new Map<number, number[]>();
    const queue = new FanoutQueue<number, number>((target, event) => byTarget.set(target, [...(byTarget.get(target) ?? []), event]), 5);
    const targets = Array.from({ length: 12 }, (_, i) => i);
    for (let event = 1; event <= 6; event++) queue.push(targets, event);
    while (queue.backlog > 0) await turn();
    for (const t of targets) expect(byTarget.get(t), `target ${t}`).to.deep.equal([1, 2, 3, 4, 5, 6]);
  });

  it('delivers each job to the targets its scope had when it was queued', async () => {
    const got: string[] = [];
    const queue = new FanoutQueue<string, number>((target, event) => got.push(`${target}:${event}`), 1);
    const scope = new Set(['a', 'b']);
    queue.push(scope, 1);
    scope.add('late');
    scope.delete('b');
    while (queue.backlog > 0) await turn();
    expect(got).to.deep.equal(['a:1', 'b:1']);
  });

  it('delivers everything at once when the backlog passes its bound, so it never grows without end', async () => {
    const got: number[] = [];
    const queue = new FanoutQueue<number, number>((_target, event) => got.push(event), 2, 6);
    queue.push([1, 2, 3, 4], 1);
    expect(got, 'one slice').to.have.length(2);
    queue.push([1, 2, 3, 4], 2);
    expect(queue.backlog, 'within the bound: waits for its turn').to.equal(6);
    queue.push([1, 2, 3], 3);
    expect(queue.backlog, 'past the bound: all delivered').to.equal(0);
    expect(got).to.deep.equal([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]);
    await turn();
    expect(got, 'nothing delivered twice').to.have.length(11);
  });

  it('does not make a delivery twice when one throws, and goes on with the rest', async () => {
    const got: string[] = [];
    const queue = new FanoutQueue<string, number>((target, event) => {
      if (target === 'bad' && event === 1) throw new Error('boom');
      got.push(`${target}:${event}`);
    }, 10);
    expect(() => queue.push(['a', 'bad', 'c'], 1)).to.throw('boom');
    await turn();
    queue.push(['a', 'bad', 'c'], 2);
    while (queue.backlog > 0) await turn();
    expect(got).to.deep.equal(['a:1', 'c:1', 'a:2', 'bad:2', 'c:2']);
  });
});
