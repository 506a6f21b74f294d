/**
 * The side-by-side comparison with Nchan (nginx's SSE module, C): the shared harness
 * (`../shared/bench`, its `ours/side-by-side*.sh`) runs the same load client against a throw-away
 * Nchan and against this project, alternating, in one run on this machine; this module runs it,
 * reads its result files and turns them into figures, each next to Nchan's from the same run and as
 * a ratio to it. PostgreSQL and Redis, which the harness leaves out of the server CPU (Nchan's memory
 * store needs neither), are read from /proc over each scenario's publish window and reported apart.
 *
 * The harness's scripts publish Nchan's default body (226 bytes as sent) and take no setting for it;
 * the service's events are the full message JSON (about 1 KB). So after the harness, Nchan's fan-out
 * scenarios run once more from here with a body of the service's event's size (nchan-fanout.ts), and
 * each comparison is made with that run first and with the 226-byte one on a second line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BenchMode } from './bench-cluster.ts';
import { NCHAN_FANOUT_FLAGS, NCHAN_LOCK, runNchanFanout } from './nchan-fanout.ts';
import { cpuMs, pidsOfCommand } from './proc-stats.ts';
import { testConfig } from '../harness/test-config.ts';

/** The harness's scenario keys: 1 room × 1,000 streams at 50 and 100 appends/s, 1,000 rooms × 2 at 500/s, 10,000 opens, resume. */
export const SIDE_BY_SIDE_SCENARIOS = ['a50', 'a100', 'c', 'd', 'e'] as const;

const NCHAN_MODULE = '/usr/lib/nginx/modules/ngx_nchan_module.so';

export interface SideBySideFigure {
  name: string;
  value: string;
  target: string;
  note?: string;
}

/** Where the shared harness is: `SIDE_BY_SIDE_BENCH_DIR`, or `shared/bench` beside the checkout (a worktree sits one level deeper). */
export function locateHarness(): string | undefined {
  const candidates = [process.env.SIDE_BY_SIDE_BENCH_DIR, join(testConfig.repoRoot, '../shared/bench'), join(testConfig.repoRoot, '../../shared/bench')];
  return candidates.filter((c): c is string => !!c).map((c) => resolve(c)).find((c) => existsSync(join(c, 'ours/side-by-side.sh')));
}

/**
 * Makes sure nginx with the Nchan module is installed, from Debian's own packages when it is not
 * (root only). Returns why it cannot run, or undefined.
 */
export function ensureNchan(): string | undefined {
  const have = () => spawnSync('sh', ['-c', 'command -v nginx'], { stdio: 'ignore' }).status === 0 && existsSync(NCHAN_MODULE);
  if (have()) return undefined;
  if (process.getuid?.() !== 0) return 'nginx + libnginx-mod-nchan are not installed and this is not root';
  process.stdout.write('  installing nginx-light and libnginx-mod-nchan from Debian\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'nginx-light', 'libnginx-mod-nchan'], { stdio: 'inherit', env });
  return have() ? undefined : 'installing nginx-light + libnginx-mod-nchan failed';
}

/** Cumulative CPU ms of PostgreSQL's and Redis's processes, sampled twice a second with the time. */
class StoreCpuSampler {
  readonly samples: Array<{ at: number; postgres: number; redis: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Last reading of every process seen: a backend that ended keeps its CPU in the totals. */
  private readonly last = new Map<number, { label: 'postgres' | 'redis'; ms: number }>();

  start(): void {
    const loop = async () => {
      const at = Date.now();
      for (const [label, command] of [['postgres', 'postgres'], ['redis', 'redis-server']] as const) {
        for (const pid of await pidsOfCommand(command)) {
          if (label === 'postgres' && !(await isBenchPostgres(pid))) continue;
          const ms = await cpuMs(pid).catch(() => undefined);
          if (ms !== undefined) this.last.set(pid, { label, ms });
        }
      }
      const sums = { postgres: 0, redis: 0 };
      for (const { label, ms } of this.last.values()) sums[label] += ms;
      this.samples.push({ at, ...sums });
      // A reading in flight when `stop` came must not schedule another (it would keep the bench alive).
      if (!this.stopped) this.timer = setTimeout(() => void loop(), 500);
    };
    void loop();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** CPU ms used over [from, to] (epoch ms), interpolated between samples. */
  usedBetween(from: number, to: number): { postgres: number; redis: number } | undefined {
    const at = (t: number) => {
      const s = this.samples;
      if (s.length < 2 || t < s[0]!.at || t > s[s.length - 1]!.at) return undefined;
      const i = s.findIndex((x) => x.at >= t);
      const b = s[i]!;
      const a = s[Math.max(0, i - 1)]!;
      const f = b.at === a.at ? 1 : (t - a.at) / (b.at - a.at);
      return { postgres: a.postgres + f * (b.postgres - a.postgres), redis: a.redis + f * (b.redis - a.redis) };
    };
    const x = at(from);
    const y = at(to);
    return x && y ? { postgres: y.postgres - x.postgres, redis: y.redis - x.redis } : undefined;
  }
}

/**
 * PostgreSQL's shared processes (postmaster, writers, checkpointer) and the backends of the harness's
 * scratch databases (`bench_sbs…`); backends of other databases on the machine are someone else's.
 */
async function isBenchPostgres(pid: number): Promise<boolean> {
  const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ');
  const backend = /^postgres: [^:]+: \S+ (\S+) \S+/.exec(cmdline);
  return !backend || backend[1]!.startsWith('bench_sbs');
}

/**
 * The environment the project needs on top of what the harness sets (it starts the services the way a
 * developer does). The harness lifts the service's protective limits (the append rate, the stream
 * caps, the output queues) to measure what it can do. Two more it does not name are lifted here, or
 * scenario `d` (10,000 opens at once, all on one token) would measure them, not the opens: the
 * gateway's open rate (1,000 a second after a burst of 2,000, lifted as the bench's own deployments
 * lift it) and the authorizations one principal may have waiting for core (64 of the queue's 1,024:
 * raised to the whole queue).
 */
const PROJECT_ENV = {
  CHAT_DEVELOPMENT_MODE: 'true',
  GATEWAY_STREAM_OPENS_PER_SECOND: '1000000',
  GATEWAY_STREAM_OPEN_BURST: '1000000',
  CORE_AUTHORIZATIONS_PER_PRINCIPAL: '1024',
};

export interface SideBySideResult {
  figures: SideBySideFigure[];
  /** Nchan's server CPU per delivery in scenario c with the service's event's size (median of the runs), µs. */
  nchanEventSizedCpuPerDeliveryUs?: number;
}

/**
 * Runs the harness for one deployment shape (all-in-one on PostgreSQL + Redis, or separate
 * services), holding Nchan's lock, then Nchan's fan-out scenarios again with a body of `eventBytes`
 * (the service's event's size), and returns the figures.
 */
export async function runSideBySide(mode: BenchMode, options: { runs: number; scenarios: readonly string[]; eventBytes: number }): Promise<SideBySideResult> {
  const harness = locateHarness();
  if (!harness) return { figures: [{ name: 'side by side with Nchan', value: 'skipped: harness not found (set SIDE_BY_SIDE_BENCH_DIR)', target: '—' }] };
  const missing = ensureNchan();
  if (missing) return { figures: [{ name: 'side by side with Nchan', value: `skipped: ${missing}`, target: '—' }] };
  const script = join(harness, 'ours', mode === 'all-in-one' ? 'side-by-side.sh' : 'side-by-side-distributed.sh');
  const out = await mkdtemp(join(tmpdir(), `side-by-side-${mode}-`));
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  process.stdout.write(`  harness ${script}, results in ${out}; load average at start ${load}\n`);
  const sampler = new StoreCpuSampler();
  sampler.start();
  try {
    await new Promise<void>((resolveRun, reject) => {
      const child = spawn('flock', [NCHAN_LOCK, 'bash', script, testConfig.repoRoot, out, String(options.runs), options.scenarios.join(' ')], {
        env: { ...process.env, ...PROJECT_ENV },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const relay = (chunk: Buffer) => process.stdout.write(chunk.toString().replace(/^(?=.)/gm, '    '));
      child.stdout.on('data', relay);
      child.stderr.on('data', relay);
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolveRun() : reject(new Error(`${script} exited with ${code}`))));
    });
  } finally {
    sampler.stop();
  }
  for (let run = 1; run <= options.runs; run++) {
    for (const scenario of options.scenarios.filter((s) => s in NCHAN_FANOUT_FLAGS)) {
      process.stdout.write(`    [nchan ${scenario}, ${options.eventBytes} B body] run ${run}\n`);
      await runNchanFanout(harness, scenario, options.eventBytes, join(out, `nchanpad-${scenario}-run${run}.txt`));
    }
  }
  const results = await readResults(out);
  const padded = [...results].filter(([k, r]) => k.startsWith('nchanpad/c/') && !r.failed).map(([, r]) => r.server?.cpuUsPerDelivery as number);
  const perDelivery = median(padded);
  return {
    figures: figuresOf(results, mode === 'all-in-one' ? 'ours' : 'dist', sampler, options.eventBytes),
    ...(perDelivery === undefined ? {} : { nchanEventSizedCpuPerDeliveryUs: perDelivery }),
  };
}

/** The figures of an earlier run's result directory (PostgreSQL and Redis then unmeasured). */
export async function figuresOfResults(dir: string, mode: BenchMode, eventBytes: number): Promise<SideBySideFigure[]> {
  return figuresOf(await readResults(dir), mode === 'all-in-one' ? 'ours' : 'dist', new StoreCpuSampler(), eventBytes);
}

type Result = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the harness's JSON, read defensively below

/** `side-name-runN.txt` → its RESULT_JSON (and PROC_CPU_JSON, distributed) by side, scenario and run; `nchanpad` is Nchan with the service's event's size. */
async function readResults(dir: string): Promise<Map<string, Result>> {
  const results = new Map<string, Result>();
  for (const file of await readdir(dir)) {
    const m = /^(nchanpad|nchan|ours|dist)-(.+)-run(\d+)\.txt$/.exec(file);
    if (!m) continue;
    const text = await readFile(join(dir, file), 'utf8');
    const json = /^RESULT_JSON (.*)$/m.exec(text)?.[1];
    const proc = /^PROC_CPU_JSON (.*)$/m.exec(text)?.[1];
    const load = /load: ([\d. ]+)$/m.exec(text)?.[1];
    const failure = /^(ABORT: .*)$/m.exec(text)?.[1] ?? `harness exit ${/^rc=(\d+)$/m.exec(text)?.[1] ?? '?'}`;
    results.set(`${m[1]}/${m[2]}/${m[3]}`, json ? { ...JSON.parse(json), procCpu: proc ? JSON.parse(proc) : undefined, load } : { failed: `${failure} (${join(dir, file)})`, load });
  }
  return results;
}

const ms = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '—' : v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`);
const ratio = (ours: number | undefined, nchan: number | undefined) =>
  ours === undefined || nchan === undefined || !(nchan > 0) ? '—' : `${(ours / nchan).toFixed(2)}×`;
const median = (xs: number[]) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? undefined : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Server CPU µs per append: the harness's CPU per delivery times deliveries per acknowledged append. */
function cpuPerAppend(r: Result): number | undefined {
  const perDelivery = r.server?.cpuUsPerDelivery;
  const ok = r.publish?.ok;
  return typeof perDelivery === 'number' && ok > 0 ? (perDelivery * r.delivery.received) / ok : undefined;
}

function figuresOf(results: Map<string, Result>, side: 'ours' | 'dist', sampler: StoreCpuSampler, eventBytes: number): SideBySideFigure[] {
  const figures: SideBySideFigure[] = [];
  const runs = [...new Set([...results.keys()].map((k) => k.split('/')[2]!))].sort();
  const pairs = (scenario: string) => {
    const all = runs.map((run) => ({
      run,
      ours: results.get(`${side}/${scenario}/${run}`),
      nchan: results.get(`nchan/${scenario}/${run}`),
      nchanPad: results.get(`nchanpad/${scenario}/${run}`),
    }));
    for (const p of all) if (p.ours?.failed) figures.push({ name: `${scenario} run ${p.run}`, value: `no result: ${p.ours.failed}`, target: '—', note: `load ${p.ours.load ?? '?'}` });
    return all.filter((p) => p.ours && !p.ours.failed);
  };
  const perRun = <T>(xs: T[], f: (x: T) => string) => xs.map(f).join('; ');
  type Pair = ReturnType<typeof pairs>[number];
  // Nchan with the service's event's size first, then with the harness's 226-byte body.
  const bodies = [
    { label: `${eventBytes} B body`, of: (p: Pair) => p.nchanPad, suffix: '' },
    { label: '226 B body', of: (p: Pair) => p.nchan, suffix: ', against Nchan’s 226-byte body' },
  ];

  for (const [scenario, rate] of [['a50', 50], ['a100', 100]] as const) {
    const ps = pairs(scenario);
    if (ps.length === 0) continue;
    for (const body of bodies) {
      if (!ps.some((p) => body.of(p))) continue;
      figures.push({
        name: `1 room × 1,000 streams, ${rate} appends/s: append→receipt p50 / p99${body.suffix}`,
        value: perRun(ps, (p) => `${ms(p.ours!.latencyMs?.p50)} / ${ms(p.ours!.latencyMs?.p99)} (Nchan, ${body.label}: ${ms(body.of(p)?.latencyMs?.p50)} / ${ms(body.of(p)?.latencyMs?.p99)}; p99 ${ratio(p.ours!.latencyMs?.p99, body.of(p)?.latencyMs?.p99)})`),
        target: 'p99 ≤ Nchan’s (≤ 1.00×)',
        note: `load ${perRun(ps, (p) => p.ours!.load ?? '?')}; loss ${perRun(ps, (p) => `${p.ours!.delivery?.loss} (streams the server ended: ${p.ours!.delivery?.closedDuring ?? 0})`)}`,
      });
    }
    figures.push({
      name: `append round trip p99 in that scenario (${rate}/s)`,
      value: perRun(ps, (p) => `${ms(p.ours!.publish?.latencyMs?.p99)} (${bodies.map((b) => `Nchan publish, ${b.label}: ${ms(b.of(p)?.publish?.latencyMs?.p99)}, ${ratio(p.ours!.publish?.latencyMs?.p99, b.of(p)?.publish?.latencyMs?.p99)}`).join('; ')})`),
      target: '≤ 25 ms',
      note: `achieved ${perRun(ps, (p) => `${(p.ours!.publish?.achievedRate ?? 0).toFixed(0)}/s`)}`,
    });
  }

  const cs = pairs('c');
  if (cs.length > 0) {
    for (const body of bodies) {
      if (!cs.some((p) => body.of(p))) continue;
      figures.push({
        name: `1,000 rooms × 2 streams, 500 appends/s: append→receipt p50 / p99${body.suffix}`,
        value: perRun(cs, (p) => `${ms(p.ours!.latencyMs?.p50)} / ${ms(p.ours!.latencyMs?.p99)} (Nchan, ${body.label}: ${ms(body.of(p)?.latencyMs?.p50)} / ${ms(body.of(p)?.latencyMs?.p99)}; p99 ${ratio(p.ours!.latencyMs?.p99, body.of(p)?.latencyMs?.p99)})`),
        target: 'p99 ≤ 5 ms',
        note: `achieved ${perRun(cs, (p) => `${(p.ours!.publish?.achievedRate ?? 0).toFixed(0)}/s`)}; load ${perRun(cs, (p) => p.ours!.load ?? '?')}`,
      });
    }
    for (const body of bodies) {
      if (!cs.some((p) => body.of(p))) continue;
      figures.push({
        name: `server CPU per append in that scenario (service processes + dev-core)${body.suffix}`,
        value: perRun(cs, (p) => {
          const ours = cpuPerAppend(p.ours!);
          const nchan = cpuPerAppend(body.of(p) ?? {});
          return `${ours === undefined ? '—' : Math.round(ours).toLocaleString('en-US')} µs (Nchan, ${body.label}: ${nchan === undefined ? '—' : Math.round(nchan)} µs, ${ratio(ours, nchan)})`;
        }),
        target: "≤ Nchan's with the same payload size (≤ 1.00×)",
        note: perRun(cs, (p) => storeNote(p.ours!, sampler) + serviceNote(p.ours!)),
      });
    }
  }

  const ds = pairs('d10k');
  if (ds.length > 0) {
    figures.push({
      name: '10,000 streams opened',
      value: perRun(ds, (p) => {
        const open = p.ours!.openWallS as number | undefined;
        const cpu = p.ours!.server?.cpuSecondsToOpen as number | undefined;
        return `${open?.toFixed(1) ?? '—'} s${cpu ? `, ${Math.round((cpu * 1e6) / Math.max(1, p.ours!.opened))} µs server CPU each` : ''} (Nchan ${(p.nchan?.openWallS as number | undefined)?.toFixed(1) ?? '—'} s, ${ratio(open, p.nchan?.openWallS)})`;
      }),
      target: '≤ 3 s, ≤ 300 µs each',
      note: `opened ${perRun(ds, (p) => `${p.ours!.opened}/${p.ours!.params?.N}`)}`,
    });
    figures.push({
      name: 'idle memory per held stream (RssAnon)',
      value: perRun(ds, (p) => `${(p.ours!.server?.rssAnonPerConnKb as number | undefined)?.toFixed(1) ?? '—'} KiB (Nchan Pss ${(p.nchan?.server?.pssPerConnKb as number | undefined)?.toFixed(1) ?? '—'} KiB, ${ratio(p.ours!.server?.rssAnonPerConnKb, p.nchan?.server?.pssPerConnKb)})`),
      target: '≤ 10 KiB',
    });
  }

  for (const missed of [50, 1500]) {
    const es = pairs(`e${missed}`);
    if (es.length === 0) continue;
    figures.push({
      name: `resume after ${missed} missed events`,
      value: perRun(es, (p) => `${p.ours!.pass ? 'exact' : 'NOT exact'}, ${p.ours!.missedReplayed}/${missed} replayed (Nchan ${p.nchan?.pass ? 'exact' : `${p.nchan?.missedReplayed ?? '—'}/${missed} replayed`})`),
      target: 'every missed event, in order, once',
    });
  }
  if (figures.length > 0) {
    figures.push({ name: `Nchan median of these runs, ${eventBytes} B body, for reference`, value: nchanMedians(results, 'nchanpad'), target: '—' });
    figures.push({ name: 'Nchan median of these runs, 226 B body, for reference', value: nchanMedians(results, 'nchan'), target: '—' });
  }
  return figures;
}

/** PostgreSQL's and Redis's CPU per append over the scenario's publish-and-drain window. */
function storeNote(r: Result, sampler: StoreCpuSampler): string {
  const end = Date.parse(r.time);
  const window = (r.delivery?.deliverWindowS as number | undefined) ?? 0;
  const used = Number.isFinite(end) && window > 0 ? sampler.usedBetween(end - window * 1000, end) : undefined;
  const ok = r.publish?.ok as number;
  if (!used || !(ok > 0)) return 'PostgreSQL and Redis: not measured';
  return `PostgreSQL ${Math.round((used.postgres * 1000) / ok)} µs, Redis ${Math.round((used.redis * 1000) / ok)} µs per append (the harness's database; Redis: the whole instance)`;
}

/** Per-service CPU over the whole scenario (connect and settle included), distributed only. */
function serviceNote(r: Result): string {
  const cpu = r.procCpu?.cpuS as Record<string, number> | undefined;
  const ok = r.publish?.ok as number;
  if (!cpu || !(ok > 0)) return '';
  return `; whole scenario incl. opens, per append: ${Object.entries(cpu)
    .filter(([k]) => k !== 'other')
    .map(([k, s]) => `${k} ${Math.round((s * 1e6) / ok)} µs`)
    .join(', ')}`;
}

function nchanMedians(results: Map<string, Result>, side: 'nchan' | 'nchanpad'): string {
  const of = (scenario: string) => [...results].filter(([k, r]) => k.startsWith(`${side}/${scenario}/`) && !r.failed).map(([, r]) => r);
  const parts: string[] = [];
  for (const s of ['a50', 'a100', 'c']) {
    const rs = of(s);
    if (rs.length) parts.push(`${s} p99 ${ms(median(rs.map((r) => r.latencyMs?.p99)))}`);
  }
  const c = of('c');
  if (c.length) parts.push(`c CPU/append ${Math.round(median(c.map((r) => cpuPerAppend(r) ?? NaN)) ?? NaN)} µs`);
  return parts.join(', ') || '—';
}
