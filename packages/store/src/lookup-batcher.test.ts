import { expect } from 'chai';
import { LookupBatcher } from './lookup-batcher.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('LookupBatcher', () => {
  it('sends a lone lookup at once and answers lookups that queue behind a running query in one query', async () => {
    const queries: Array<{ inputs: number[]; release: () => void }> = [];
    const batcher = new LookupBatcher<number, string>(
      (inputs) => new Promise((resolve) => queries.push({ inputs, release: () => resolve(inputs.map((n) => `v${n}`)) })),
      { maxBatch: 3, maxConcurrent: 1 },
    );
    const answers = [1, 2, 3, 4, 5].map((n) => batcher.submit(n));
    await tick();
    expect(queries.map((q) => q.inputs)).to.deep.equal([[1]]);
    queries[0]!.release();
    await tick();
    expect(queries.map((q) => q.inputs)).to.deep.equal([[1], [2, 3, 4]]);
    queries[1]!.release();
    await tick();
    queries[2]!.release();
    expect(await Promise.all(answers)).to.deep.equal(['v1', 'v2', 'v3', 'v4', 'v5']);
  });

  it('fails the lookups of a failed query only', async () => {
    let calls = 0;
    const batcher = new LookupBatcher<number, number>(
      async (inputs) => {
        calls += 1;
        if (calls === 1) throw new Error('gone');
        return inputs.map((n) => n * 2);
      },
      { maxBatch: 10, maxConcurrent: 1 },
    );
    const first = batcher.submit(1);
    const second = batcher.submit(2);
    expect(await first.then(() => 'ok', (err: Error) => err.message)).to.equal('gone');
    expect(await second).to.equal(4);
  });
});
