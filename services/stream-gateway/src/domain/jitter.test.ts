import { expect } from 'chai';
import { jittered } from './jitter.ts';

describe('jittered (stream age and recheck timers)', () => {
  it('stays within ±fraction of the base, reaching both ends', () => {
    expect(jittered(1000, 0.2, () => 0)).to.equal(800);
    expect(jittered(1000, 0.2, () => 0.5)).to.equal(1000);
    expect(jittered(1000, 0.2, () => 0.999_999)).to.equal(1200);
  });

  it('spreads many streams evenly, so their handoffs and rechecks do not fire together', () => {
    const samples = Array.from({ length: 10_000 }, () => jittered(60_000, 0.2));
    expect(Math.min(...samples)).to.be.at.least(48_000);
    expect(Math.max(...samples)).to.be.at.most(72_000);
    // Ten equal buckets over the range: each holds about a tenth (a clump would leave some empty).
    const buckets = new Array<number>(10).fill(0);
    for (const s of samples) buckets[Math.min(9, Math.floor((s - 48_000) / 2_400))]! += 1;
    for (const count of buckets) expect(count).to.be.within(800, 1200);
  });

  it('never gives a timer of 0 ms or less', () => {
    expect(jittered(1, 0.9, () => 0)).to.equal(1);
    expect(jittered(0, 0.2, () => 0.5)).to.equal(1);
  });
});
