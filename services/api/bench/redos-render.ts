/**
 * Reliability test 11's figure: the render time of every ReDoS payload at the largest body size,
 * against the 50 ms target. `pnpm bench --only redos` runs this; it prints one JSON line per
 * payload (`{"name", "ms"}`) with `--json`, else a table sorted slowest first.
 */
import { REDOS_PAYLOADS } from '../test/fixtures/redos-payloads.ts';
import { fastestRenderMs } from '../test/fixtures/render-timing.ts';
import { renderMarkdown } from '../src/domain/markdown-renderer.ts';

const TIMED_RUNS = 9;
const json = process.argv.includes('--json');
const timings = REDOS_PAYLOADS.map((payload) => {
  renderMarkdown(payload.body); // warm-up
  return { name: payload.name, ms: fastestRenderMs(payload.body, TIMED_RUNS) };
}).sort((a, b) => b.ms - a.ms);

for (const t of timings) {
  process.stdout.write(json ? `${JSON.stringify(t)}\n` : `${t.ms.toFixed(1).padStart(7)} ms  ${t.name}\n`);
}
