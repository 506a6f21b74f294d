/**
 * `tsx bench/cpu-profile-summary.ts <file.cpuprofile>... [--top 30]`: self time by function of V8
 * CPU profiles (as written by `node --cpu-prof`), to find a service's hot path after a bench run
 * with `CHILD_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { testConfig } from '../harness/test-config.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 30;
const files = args.filter((a, i) => !a.startsWith('--') && (topIndex < 0 || i !== topIndex + 1));

for (const file of files) {
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const frame = byNode.get(id)!.callFrame;
    const path = frame.url.startsWith('file://') ? relative(testConfig.repoRoot, frame.url.slice(7)) : frame.url;
    const where = path ? `${path}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + delta);
    total += delta;
  });
  const idle = self.get('(idle)') ?? 0;
  process.stdout.write(`\n${file}: ${(total / 1e6).toFixed(1)} s sampled, ${((total - idle) / 1e6).toFixed(1)} s busy\n`);
  self.delete('(idle)');
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((100 * us) / Math.max(1, total - idle)).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}\n`);
  }
}
