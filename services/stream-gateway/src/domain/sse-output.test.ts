import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { SseOutput } from './sse-output.ts';

/** A response whose buffer fills after `room` bytes and drains only when told to. */
class FakeResponse extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  writableEnded = false;
  destroyed = false;
  constructor(private readonly room: number) {
    super();
  }
  write(chunk: string | Buffer): boolean {
    this.writableLength += chunk.length;
    if (this.writableLength >= this.room) this.writableNeedDrain = true;
    return !this.writableNeedDrain;
  }
  drain(): void {
    this.writableLength = 0;
    this.writableNeedDrain = false;
    this.emit('drain');
  }
  destroy(): void {
    this.destroyed = true;
  }
}

const outputOn = (res: FakeResponse, limits = { maxEvents: 3, maxBytes: 1000 }) => new SseOutput(res as unknown as ServerResponse, limits);

describe('SseOutput', () => {
  it('listens for drain only while the client is behind', () => {
    const res = new FakeResponse(10);
    const output = outputOn(res);
    expect(output.write('12345')).to.equal(true);
    expect(res.listenerCount('drain')).to.equal(0);
    expect(output.write('67890')).to.equal(true); // over the mark: counted, within the limits
    expect(res.listenerCount('drain')).to.equal(1);
    res.drain();
    expect(res.listenerCount('drain')).to.equal(0);
    expect(output.write('x')).to.equal(true);
    expect(res.listenerCount('drain')).to.equal(0);
  });

  it('reports an overflow once more events than maxEvents wait, and forgets the backlog on drain', () => {
    const res = new FakeResponse(1);
    const output = outputOn(res);
    expect([1, 2, 3].map(() => output.write('e'))).to.deep.equal([true, true, true]);
    expect(output.write('e')).to.equal(false);
    res.drain();
    expect(output.write('e')).to.equal(true);
  });

  it('reports an overflow once the buffer passes maxBytes', () => {
    const res = new FakeResponse(1);
    const output = outputOn(res, { maxEvents: 100, maxBytes: 10 });
    expect(output.write('123456')).to.equal(true);
    expect(output.write('123456')).to.equal(false);
  });

  it('resolves whenWritable at once when nothing is buffered, else on drain, and on end', async () => {
    const res = new FakeResponse(1);
    const output = outputOn(res);
    await output.whenWritable();
    output.write('e');
    let resolved = false;
    const waiting = output.whenWritable().then(() => (resolved = true));
    await new Promise((r) => setImmediate(r));
    expect(resolved).to.equal(false);
    res.drain();
    await waiting;
    output.write('e');
    const second = output.whenWritable();
    output.destroy();
    await second;
    expect(res.destroyed).to.equal(true);
  });
});
