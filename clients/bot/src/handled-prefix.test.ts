import { expect } from 'chai';
import { HandledPrefix } from './handled-prefix.ts';

describe('HandledPrefix', () => {
  it('moves only through a run handled from the start, whatever order handlers finish in', () => {
    const prefix = new HandledPrefix();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((cursor) => prefix.add(cursor));
    expect(prefix.complete(c!)).to.equal(undefined);
    expect(prefix.complete(b!)).to.equal(undefined);
    expect(prefix.size).to.equal(4);
    expect(prefix.complete(a!)).to.equal('c');
    expect(prefix.size).to.equal(1);
    expect(prefix.complete(d!)).to.equal('d');
    expect(prefix.size).to.equal(0);
  });

  it('keeps the order across compactions of a long run', () => {
    const prefix = new HandledPrefix();
    const entries = Array.from({ length: 5000 }, (_, i) => prefix.add(String(i)));
    let last: string | undefined;
    // Finish in pairs, the later one first: the prefix moves on every second completion.
    for (let i = 0; i < entries.length; i += 2) {
      expect(prefix.complete(entries[i + 1]!)).to.equal(undefined);
      last = prefix.complete(entries[i]!);
      expect(last).to.equal(String(i + 1));
    }
    expect(prefix.size).to.equal(0);
    expect(prefix.complete(prefix.add('next'))).to.equal('next');
  });

  it('lets a reader wait until fewer than a limit are outstanding, or until it is stopped', async () => {
    const prefix = new HandledPrefix();
    const first = prefix.add('1');
    prefix.add('2');
    const stop = new AbortController();
    let passed = false;
    const waiting = prefix.below(2, stop.signal).then(() => (passed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(passed).to.equal(false);
    prefix.complete(first);
    await waiting;
    expect(prefix.size).to.equal(1);
    prefix.add('3');
    const stopped = prefix.below(2, stop.signal);
    stop.abort();
    await stopped;
  });
});
