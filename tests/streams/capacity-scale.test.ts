import { expect } from 'chai';
import { printReport } from '../harness/sse-delivery-check.ts';
import { describeScale, scaleProblems } from '../bench/scale-report.ts';
import { runCapacityScale, TEST_SCALE } from '../bench/scale-scenario.ts';

const { gateways, rooms, perRoom } = TEST_SCALE;

describe("streams: docs/capacity.md's model checked at a small scale (the bench's `scale` scenario at test size)", function () {
  this.timeout(240_000);

  it(`${gateways} gateways × ${(rooms * perRoom) / gateways} streams over ${rooms} rooms on a 2-master Redis Cluster, appends through 2 APIs: each gateway's streams, deliveries and CPU and each shard's operations and keys are the model's shares, 0 lost, duplicated or reordered`, async () => {
    const result = await runCapacityScale(TEST_SCALE);
    for (const line of describeScale(result)) printReport(line.name, { value: line.value, model: line.target, ...(line.note ? { note: line.note } : {}) });
    expect(scaleProblems(result)).to.deep.equal([]);
  });
});
