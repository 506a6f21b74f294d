import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { testConfig } from '../harness/test-config.ts';

const run = promisify(execFile);

/**
 * Reliability test 11's figure: every ReDoS payload rendered at the largest body size, in CPU time
 * (services/api/bench/redos-render.ts, in a process of its own). Returns the slowest few.
 */
export async function measureRedosRender(): Promise<{ slowest: Array<{ name: string; ms: number }>; count: number }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', 'services/api/bench/redos-render.ts', '--json'], { cwd: testConfig.repoRoot, maxBuffer: 1 << 20 });
  const timings = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { name: string; ms: number });
  return { slowest: timings.slice(0, 3), count: timings.length };
}
