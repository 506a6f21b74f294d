import { expect } from 'chai';
import { firstHeartbeatDelay, sharedHeartbeatFrame } from './heartbeat.ts';

describe('heartbeat timing and frames', () => {
  it('puts the first heartbeat between half the interval and the whole of it', () => {
    expect(firstHeartbeatDelay(15_000, () => 0)).to.equal(7_500);
    expect(firstHeartbeatDelay(15_000, () => 0.999_999)).to.equal(15_000);
    const samples = Array.from({ length: 10_000 }, () => firstHeartbeatDelay(15_000));
    expect(Math.min(...samples)).to.be.at.least(7_500);
    expect(Math.max(...samples)).to.be.at.most(15_000);
    // Streams opened together beat spread over the second half of the interval, not in one tick.
    const buckets = new Array<number>(5).fill(0);
    for (const s of samples) buckets[Math.min(4, Math.floor((s - 7_500) / 1_500))]! += 1;
    for (const count of buckets) expect(count).to.be.within(1_700, 2_300);
  });

  it('builds one frame per tick, shared by every stream that beats in it', () => {
    const at = Date.UTC(2026, 10, 26, 10, 0, 0);
    const frame = sharedHeartbeatFrame(at);
    expect(sharedHeartbeatFrame(at)).to.equal(frame);
    expect(frame.bytes.toString('utf8')).to.equal('event: heartbeat\ndata: {"serverTime":"2026-11-26T10:00:00.000Z"}\n\n');
    const next = sharedHeartbeatFrame(at + 1000);
    expect(next).to.not.equal(frame);
    expect(next.bytes.toString('utf8')).to.contain('"serverTime":"2026-11-26T10:00:01.000Z"');
  });
});
