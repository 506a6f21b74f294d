import { expect } from 'chai';
import { fnv1a32, partitionLabel, partitionOf } from './partition.ts';
import { compareEntryIds, entryIdAt, minEntryId } from './entry-id.ts';
import { safeMinId } from './redis/stream-trimmer.ts';

describe('partitioning', () => {
  it('uses the published FNV-1a 32-bit values, so every process agrees', () => {
    expect(fnv1a32('')).to.equal(0x811c9dc5);
    expect(fnv1a32('a')).to.equal(0xe40c292c);
    expect(fnv1a32('foobar')).to.equal(0xbf9cf968);
  });

  it('spreads ids evenly over the partitions', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[partitionOf(`01J${i.toString(36).padStart(23, '0')}`, 16)]! += 1;
    for (const count of counts) expect(count).to.be.within(800, 1200);
  });

  it('labels partitions with at least two digits', () => {
    expect(partitionLabel(7, 16)).to.equal('07');
    expect(partitionLabel(7, 256)).to.equal('007');
  });
});

describe('entry ids and the safe trim point', () => {
  it('orders ids numerically, not as text', () => {
    expect(compareEntryIds('9-0', '10-0')).to.be.below(0);
    expect(compareEntryIds('5-10', '5-9')).to.be.above(0);
    expect(minEntryId('1700000000000-3', '1700000000000-12')).to.equal('1700000000000-3');
    expect(entryIdAt(1234.9)).to.equal('1234-0');
  });

  it('never trims past a group\'s last-delivered or oldest pending id, nor above the retention floor', () => {
    expect(safeMinId('100-0', [])).to.equal('100-0');
    expect(safeMinId('100-0', [{ lastDeliveredId: '50-1', oldestPendingId: null }])).to.equal('50-1');
    expect(safeMinId('100-0', [{ lastDeliveredId: '90-0', oldestPendingId: '20-5' }])).to.equal('20-5');
    expect(
      safeMinId('100-0', [
        { lastDeliveredId: '200-0', oldestPendingId: null },
        { lastDeliveredId: '0-0', oldestPendingId: null },
      ]),
    ).to.equal('0-0');
    expect(safeMinId('100-0', [{ lastDeliveredId: '200-0', oldestPendingId: '150-0' }])).to.equal('100-0');
  });
});
