import { expect } from 'chai';
import { printReport } from '../harness/sse-delivery-check.ts';
import { describeStorm, stormFigures, stormProblems } from '../bench/storm-report.ts';
import { runGatewayStorm, TEST_STORM } from '../bench/storm-scenario.ts';

const { streams, rooms, appendsPerSecond } = TEST_STORM;

describe("streams: an SRE's day at test size (the bench's `storm` scenario): 2 gateways behind round-robin balancers, one SIGKILLed, then the other SIGTERMed", function () {
  this.timeout(240_000);

  // The timed targets (catch-up within 10 s, the survivor's p99 ≤ 100 ms, the drain's reconnects
  // ≤ 5 % in any second) are printed here and judged by `pnpm bench --only storm`.
  it(`${streams.toLocaleString('en-US')} resuming clients over ${rooms} rooms at ${appendsPerSecond} appends/s: every cut client back, 0 lost, duplicated or reordered, only 429/503 with Retry-After, no refusal at core's bound, no stream ended by lease trouble`, async () => {
    const run = await runGatewayStorm(TEST_STORM, (line) => process.stdout.write(`      … ${line}\n`));
    const figures = stormFigures(run);
    for (const line of describeStorm(run, figures)) printReport(line.name, { value: line.value, target: line.target, ...(line.note ? { note: line.note } : {}) });
    expect(stormProblems(run, figures, { timed: false })).to.deep.equal([]);
  });
});
