/**
 * `pnpm bench`: starts each deployment shape on this machine, runs the scenarios against it and
 * prints every figure next to its target. Options: `--mode all-in-one|distributed|both`,
 * `--only reference,redos,startup,floor,sidebyside,append,fanout,latency,idle,open,mention,leak,bot,viewer,growth` and `--quick` (shorter runs, for a
 * smoke check). `floor` (about 2 minutes: the contract's floor, each part measured on its own, against
 * the service's CPU per append at saturation; floor-scenario.ts) measures its parts before the
 * deployments and prints its figures after them, with Nchan's part from `sidebyside` when that ran. `reference` (raw PostgreSQL on this machine, the yardstick of the append targets),
 * `redos` (render time of the ReDoS payloads) and `startup` (the compiled build's start to ready) run
 * once, before the deployments. `sidebyside` runs the shared harness against Nchan and against each deployment shape (it starts its own; see
 * side-by-side.ts): `--sbs-runs N` (default 1) and `--sbs-scenarios 'a50 a100 c d e'` (the default).
 * `growth` (append and list latency on an empty store and on 10 million messages; seeding takes a quarter
 * of an hour) runs only when named, on its own distributed deployment. `scale` (docs/capacity.md's model
 * checked: 4 gateways holding 16,000 streams over a 2-master Redis Cluster, appends through 2 APIs)
 * also runs only when named, on its own deployment. `search` (a store of 1,000,000 messages over
 * 10,000 rooms seeded with SQL, or `--search-messages N`; `--quick` 50,000: search latency per kind
 * of query at 20/s, the trigram index's size per message and its cost to the append round trip) also
 * runs only when named, on its own distributed deployment. `storm` (issue #31: 20,000 resuming streams,
 * or `--storm-streams N`, over 2 gateways behind round-robin balancers; one gateway SIGKILLed, then the
 * other SIGTERMed) also runs only when named, on its own distributed deployment.
 */
import { WRITER_COUNTS, formatAppendCapacity, measureAppendCapacity, measureAppendThroughput } from './append-throughput.ts';
import { startBenchCluster, type BenchMode } from './bench-cluster.ts';
import { measureMachineReference, REFERENCE_TPS } from './machine-reference.ts';
import { runGrowthScenario } from './growth-scenario.ts';
import { runScaleScenario } from './scale-scenario.ts';
import { runSearchScenario } from './search-scenario.ts';
import { describeStorm, stormFigures, stormProblems } from './storm-report.ts';
import { FULL_STORM, runGatewayStorm, TEST_STORM } from './storm-scenario.ts';
import { measureRedosRender } from './redos-figure.ts';
import { floorFigures, measureFloorParts, nchanPerDelivery, type FloorParts } from './floor-scenario.ts';
import { measureServiceEventBytes } from './floor-service.ts';
import { runSideBySide, SIDE_BY_SIDE_SCENARIOS } from './side-by-side.ts';
import { measureStartup } from './startup-scenario.ts';
import { scenarios as streamScenarios } from './stream-scenarios.ts';
import { viewerScenario } from './viewer-scenario.ts';

interface Figure {
  mode: BenchMode | 'machine';
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
const only = new Set((option('only') ?? 'reference,redos,startup,floor,sidebyside,append,fanout,latency,idle,open,mention,leak,bot,viewer').split(','));
const sideBySide = { runs: Number(option('sbs-runs') ?? 1), scenarios: (option('sbs-scenarios') ?? SIDE_BY_SIDE_SCENARIOS.join(' ')).split(/[ ,]+/).filter(Boolean) };
/** A flag's value that must be a whole number above zero (thousands separators allowed). */
function positiveCount(name: string, value: string): number {
  const n = Number(value.replace(/[,_]/g, ''));
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--${name} takes a whole number above zero, not ${JSON.stringify(value)}`);
  return n;
}
const searchMessagesArg = option('search-messages');
const searchMessages = searchMessagesArg === undefined ? undefined : positiveCount('search-messages', searchMessagesArg);
const stormStreamsArg = option('storm-streams');
const figures: Figure[] = [];
const report = (figure: Figure) => {
  figures.push(figure);
  process.stdout.write(`  ${figure.name}: ${figure.value} (target ${figure.target})${figure.note ? ` — ${figure.note}` : ''}\n`);
};

if (only.has('reference')) {
  process.stdout.write('\n== machine ==\n');
  const reference = await measureMachineReference({ seconds: quick ? 3 : 8 });
  if (!reference) process.stdout.write('  raw PostgreSQL reference skipped: pgbench not found\n');
  else {
    const scaled = (target: number, tps: number, referenceTps: number) => Math.round((target * tps) / referenceTps).toLocaleString('en-US');
    report({
      mode: 'machine',
      name: 'raw PostgreSQL, insert-plus-counter, 8 clients (pgbench)',
      value: `${Math.round(reference.oneRoomTps).toLocaleString('en-US')} tx/s into 1 room, ${Math.round(reference.hundredRoomsTps).toLocaleString('en-US')} tx/s over 100 rooms`,
      target: `reference machine: ~${REFERENCE_TPS.oneRoom.toLocaleString('en-US')} / ~${REFERENCE_TPS.hundredRooms.toLocaleString('en-US')} tx/s`,
      note: `the append targets scaled to this machine: ${scaled(1000, reference.oneRoomTps, REFERENCE_TPS.oneRoom)}/s into 1 room, ${scaled(2900, reference.hundredRoomsTps, REFERENCE_TPS.hundredRooms)}/s over 100 rooms`,
    });
  }
}
if (only.has('redos')) {
  const redos = await measureRedosRender();
  report({
    mode: 'machine',
    name: `ReDoS payloads rendered at 16 KB (${redos.count}), slowest`,
    value: redos.slowest.map((t) => `${t.name} ${t.ms.toFixed(1)} ms`).join(', '),
    target: 'each well under 50 ms',
  });
}

if (only.has('startup')) {
  for (const figure of await measureStartup({ quick })) report({ mode: 'machine', ...figure });
}

let floorParts: FloorParts | undefined;
if (only.has('floor')) {
  process.stdout.write('\n== floor (its figures follow the deployments) ==\n');
  floorParts = await measureFloorParts({ quick, progress: (line) => process.stdout.write(`  … ${line}\n`) });
}
/** Nchan's CPU per delivery of a body of the service's event's size, per side-by-side run. */
const nchanEventSized: number[] = [];

for (const mode of modes) {
  if (![...only].some((key) => !['reference', 'redos', 'startup', 'growth', 'scale', 'search', 'storm', 'floor'].includes(key))) break;
  process.stdout.write(`\n== ${mode} ==\n`);
  if (only.has('sidebyside')) {
    process.stdout.write(`  side by side with Nchan (${mode === 'all-in-one' ? 'all-in-one on PostgreSQL + Redis' : 'separate services'}), ${sideBySide.runs} run(s): ${sideBySide.scenarios.join(' ')}\n`);
    const eventBytes = floorParts?.sizes.eventBytes ?? (await measureServiceEventBytes());
    const result = await runSideBySide(mode, { ...sideBySide, eventBytes });
    for (const figure of result.figures) report({ mode, ...figure });
    if (result.nchanEventSizedCpuPerDeliveryUs !== undefined) nchanEventSized.push(result.nchanEventSizedCpuPerDeliveryUs);
  }
  if (![...only].some((key) => !['reference', 'redos', 'startup', 'sidebyside', 'growth', 'scale', 'search', 'storm', 'floor'].includes(key))) continue;
  const cluster = await startBenchCluster(mode, { apis: 2, gateways: 2 });
  try {
    if (only.has('append')) {
      const seconds = quick ? 3 : 10;
      // Warm-up, not counted: freshly started processes spend their first seconds compiling hot
      // code (TurboFan showed up in whole-machine profiles); the figures are for a running service.
      await measureAppendThroughput(cluster, { rooms: 100, clients: 32, seconds: quick ? 2 : 5 });
      const writerCounts = quick ? [32, 64] : WRITER_COUNTS;
      const one = await measureAppendCapacity(cluster, { rooms: 1, seconds, writerCounts });
      report({ mode, name: 'append throughput, 1 room', value: formatAppendCapacity(one), target: '≥ 1,000/s', note: one.best.cpuNote });
      const hundred = await measureAppendCapacity(cluster, { rooms: 100, seconds, writerCounts });
      report({ mode, name: 'append throughput, 100 rooms', value: formatAppendCapacity(hundred), target: '≥ 2,900/s', note: hundred.best.cpuNote });
    }
    for (const scenario of [...streamScenarios, viewerScenario]) {
      if (!only.has(scenario.key)) continue;
      for (const figure of await scenario.run(cluster, { quick })) report({ mode, ...figure });
    }
  } finally {
    await cluster.stop();
  }
}

if (floorParts) {
  process.stdout.write('\n== floor ==\n');
  const fromSideBySide = nchanEventSized.length === 0 ? undefined : nchanEventSized.reduce((a, b) => a + b, 0) / nchanEventSized.length;
  const nchan = await nchanPerDelivery(floorParts.sizes.eventBytes, fromSideBySide);
  for (const figure of floorFigures(floorParts, nchan)) report({ mode: 'distributed', ...figure });
}

if (only.has('growth')) {
  process.stdout.write('\n== distributed: growth ==\n');
  const progress = (line: string) => process.stdout.write(`  … ${line}\n`);
  for (const figure of await runGrowthScenario({ quick, progress })) report({ mode: 'distributed', ...figure });
}

if (only.has('scale')) {
  process.stdout.write('\n== distributed: scale ==\n');
  const progress = (line: string) => process.stdout.write(`  … ${line}\n`);
  for (const figure of await runScaleScenario({ quick, progress })) report({ mode: 'distributed', ...figure });
}

if (only.has('search')) {
  process.stdout.write('\n== distributed: search ==\n');
  const progress = (line: string) => process.stdout.write(`  … ${line}\n`);
  const searchFigures = await runSearchScenario({ quick, progress, ...(searchMessages === undefined ? {} : { messages: searchMessages }) });
  for (const figure of searchFigures) report({ mode: 'distributed', ...figure });
}

if (only.has('storm')) {
  process.stdout.write('\n== distributed: storm ==\n');
  const progress = (line: string) => process.stdout.write(`  … ${line}\n`);
  const shape = quick ? TEST_STORM : FULL_STORM;
  const run = await runGatewayStorm(stormStreamsArg === undefined ? shape : { ...shape, streams: positiveCount('storm-streams', stormStreamsArg) }, progress);
  const stormed = stormFigures(run);
  for (const figure of describeStorm(run, stormed)) report({ mode: 'distributed', ...figure });
  const problems = stormProblems(run, stormed);
  report({ mode: 'distributed', name: 'storm: targets', value: problems.length === 0 ? 'all met' : problems.join('; '), target: 'all met' });
}

process.stdout.write('\n| mode | figure | value | target |\n|---|---|---|---|\n');
for (const f of figures) process.stdout.write(`| ${f.mode} | ${f.name} | ${f.value} | ${f.target} |\n`);
