/**
 * `pnpm bench`: starts each deployment shape on this machine, runs the scenarios against it and
 * prints every figure next to its target. Options: `--mode all-in-one|distributed|both`,
 * `--only append,fanout,latency,idle,mention,leak` and `--quick` (shorter runs, for a smoke check).
 */
import { measureAppendThroughput } from './append-throughput.ts';
import { startBenchCluster, type BenchMode } from './bench-cluster.ts';
import { round } from './stats.ts';
import { scenarios as streamScenarios } from './stream-scenarios.ts';

interface Figure {
  mode: BenchMode;
  name: string;
  value: string;
  target: string;
  note?: string;
}

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
const modeArg = option('mode') ?? 'both';
const modes: BenchMode[] = modeArg === 'both' ? ['all-in-one', 'distributed'] : [modeArg as BenchMode];
const only = new Set((option('only') ?? 'append,fanout,latency,idle,mention,leak').split(','));
const figures: Figure[] = [];
const report = (figure: Figure) => {
  figures.push(figure);
  process.stdout.write(`  ${figure.name}: ${figure.value} (target ${figure.target})${figure.note ? ` — ${figure.note}` : ''}\n`);
};

for (const mode of modes) {
  process.stdout.write(`\n== ${mode} ==\n`);
  const cluster = await startBenchCluster(mode, { apis: 2, gateways: 2 });
  try {
    if (only.has('append')) {
      const seconds = quick ? 3 : 10;
      // Warm-up, not counted: freshly started processes spend their first seconds compiling hot
      // code (TurboFan showed up in whole-machine profiles); the figures are for a running service.
      await measureAppendThroughput(cluster, { rooms: 100, clients: 32, seconds: quick ? 2 : 5 });
      const one = await measureAppendThroughput(cluster, { rooms: 1, clients: 32, seconds });
      report({ mode, name: 'append throughput, 1 room', value: `${round(one.appendsPerSecond, 0)} appends/s (${one.failed} failed ${JSON.stringify(one.failures)})`, target: '≥ 1,000/s' });
      const hundred = await measureAppendThroughput(cluster, { rooms: 100, clients: 32, seconds });
      report({ mode, name: 'append throughput, 100 rooms', value: `${round(hundred.appendsPerSecond, 0)} appends/s (${hundred.failed} failed ${JSON.stringify(hundred.failures)})`, target: '≥ 2,900/s' });
    }
    for (const scenario of streamScenarios) {
      if (!only.has(scenario.key)) continue;
      for (const figure of await scenario.run(cluster, { quick })) report({ mode, ...figure });
    }
  } finally {
    await cluster.stop();
  }
}

process.stdout.write('\n| mode | figure | value | target |\n|---|---|---|---|\n');
for (const f of figures) process.stdout.write(`| ${f.mode} | ${f.name} | ${f.value} | ${f.target} |\n`);
