import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { BenchCluster } from './bench-cluster.ts';
import { pidsOfCommand, WindowCpu } from './proc-stats.ts';
import { SseLoadPool, type PoolOpenResult } from './sse-load-pool.ts';
import type { StreamTarget } from './sse-load-protocol.ts';
import { round } from './stats.ts';
import { formatCount, formatFailures, openerTokens, serverProcesses, takeStreamBranches } from './stream-rooms.ts';
import type { StreamScenario } from './stream-scenarios.ts';

/** The shape of the shared harness's open scenario (`sse-conns.mjs --conns 10000 --channels 10`). */
const STREAMS = 10_000;
const ROOMS = 10;
/** Streams per load-client process, below the open-file cap. */
const STREAMS_PER_CLIENT_PROCESS = 4500;
/** Opens in flight per load-client process. */
const CONCURRENCY = 64;
const WARM_UP_STREAMS = 300;

export interface OpenResult {
  principals: number;
  opened: number;
  failures: Record<string, number>;
  seconds: number;
  /** CPU milliseconds over the opening window, by role (server processes, dev-core, postgres, redis). */
  cpuMs: Record<string, number>;
}

/** Roles counted as the server's CPU: every service process and dev-core, not PostgreSQL or Redis. */
const APART = new Set(['postgres', 'redis', 'load client']);

function cpuMeter(cluster: BenchCluster): WindowCpu {
  return new WindowCpu(async () => [
    ...serverProcesses(cluster),
    ...(cluster.devCorePid ? [{ label: 'dev-core', pid: cluster.devCorePid }] : []),
    ...(await pidsOfCommand('postgres')).map((pid) => ({ label: 'postgres', pid })),
    ...(await pidsOfCommand('redis-server')).map((pid) => ({ label: 'redis', pid })),
  ]);
}

function sum(results: PoolOpenResult[]): PoolOpenResult {
  const failures: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.failures)) failures[k] = (failures[k] ?? 0) + v;
  return { opened: results.reduce((s, r) => s + r.opened, 0), failures, seconds: results.reduce((s, r) => s + r.seconds, 0) };
}

/**
 * Opens `STREAMS` room streams over `ROOMS` fresh branch rooms through every gateway in turn, the
 * tokens dealt round-robin over `principals` principals, and reads how long it took and the CPU
 * every process spent meanwhile. The first stream of each room opens alone (it materializes the
 * room) and counts; the streams stay open until the end of the measurement.
 */
export async function measureStreamOpens(cluster: BenchCluster, pool: SseLoadPool, options: { streams: number; principals: number }): Promise<OpenResult> {
  const tokens = (await openerTokens(cluster)).slice(0, options.principals);
  const events = (branchId: string) => `/v1/repositories/${cluster.fixture.repositoryId}/branches/${branchId}/room/events`;
  let n = 0;
  const target = (branchId: string): StreamTarget => {
    const i = n++;
    return { url: cluster.gatewayUrls[i % cluster.gatewayUrls.length]! + events(branchId), token: tokens[i % tokens.length]! };
  };
  const branches = takeStreamBranches(cluster, ROOMS);
  const firsts = branches.map(target);
  const rest: StreamTarget[] = [];
  for (let k = ROOMS; k < options.streams; k++) rest.push(target(branches[k % ROOMS]!));
  const meter = cpuMeter(cluster);
  await meter.start();
  const first = await pool.open(firsts, { concurrency: CONCURRENCY, measure: 'count' });
  const second = await pool.open(rest, { concurrency: CONCURRENCY, measure: 'count' });
  const cpuMs = await meter.stop();
  delete cpuMs['load client'];
  return { principals: tokens.length, ...sum([first, second]), cpuMs };
}

/** Same-run Nchan figures: opens/s and nginx's CPU per open, with the same load clients. */
export interface NchanOpenResult {
  opened: number;
  seconds: number;
  cpuMsPerOpen: number;
}

const run = promisify(execFile);

async function processTree(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const kids = children.split(/\s+/).filter(Boolean).map(Number);
  return [pid, ...(await Promise.all(kids.map(processTree))).flat()];
}

/**
 * The same opens against Nchan, when `BENCH_NCHAN_SCRIPT` names the shared harness's
 * `peers/nchan.sh` (run the bench under `flock /tmp/nchan-bench.lock`: the peer is shared). The
 * script restarts its nginx; the figure is taken in this run, on this machine as it is now.
 */
async function measureNchanOpens(pool: SseLoadPool, streams: number): Promise<NchanOpenResult | undefined> {
  const script = process.env['BENCH_NCHAN_SCRIPT'];
  if (!script) return undefined;
  await run(script, ['restart']);
  try {
    const master = Number((await run(script, ['pid'])).stdout.trim());
    const channel = `open${Date.now().toString(36)}-`;
    const targets = Array.from({ length: streams }, (_, i) => ({ url: `http://127.0.0.1:9080/sub?id=${channel}${i % ROOMS}`, token: 'none' }));
    const meter = new WindowCpu(async () => (await processTree(master)).map((pid) => ({ label: 'nginx', pid })));
    await meter.start();
    const opened = await pool.open(targets, { concurrency: CONCURRENCY, measure: 'count' });
    const cpu = await meter.stop();
    await pool.closeStreams();
    return { opened: opened.opened, seconds: opened.seconds, cpuMsPerOpen: (cpu['nginx'] ?? 0) / Math.max(1, opened.opened) };
  } finally {
    await run(script, ['stop']).catch(() => undefined);
  }
}

function formatOpen(r: OpenResult, nchan: NchanOpenResult | undefined, load: string): { value: string; note: string } {
  const perOpenUs = (ms: number) => (r.opened > 0 ? (ms * 1000) / r.opened : 0);
  const server = Object.entries(r.cpuMs).filter(([label]) => !APART.has(label));
  const serverUs = perOpenUs(server.reduce((s, [, ms]) => s + ms, 0));
  const apart = Object.entries(r.cpuMs).filter(([label]) => APART.has(label));
  const rate = r.opened / r.seconds;
  const ratio = nchan ? ` (Nchan same run: ${formatCount(nchan.opened / nchan.seconds)}/s in ${round(nchan.seconds, 2)} s, ${round(nchan.cpuMsPerOpen * 1000, 0)} µs nginx CPU per open; ` +
    `time ${round(r.seconds / nchan.seconds, 2)}× Nchan's, CPU ${round(serverUs / (nchan.cpuMsPerOpen * 1000), 1)}×)` : '';
  return {
    value: `${formatCount(r.opened)} opened in ${round(r.seconds, 2)} s, ${formatCount(rate)}/s; server CPU ${round(serverUs, 0)} µs per open${ratio}${formatFailures(r.failures)}`,
    note:
      `CPU per open: ${server.map(([label, ms]) => `${label} ${round(perOpenUs(ms), 0)} µs`).join(', ')}; ` +
      `apart: ${apart.map(([label, ms]) => `${label} ${round(perOpenUs(ms), 0)} µs`).join(', ')}; load average ${load}`,
  };
}

/** The 1, 5 and 15-minute load averages: how busy the shared machine was around a figure. */
async function loadAverage(): Promise<string> {
  return (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
}

export const openScenario: StreamScenario = {
  key: 'open',
  async run(cluster, { quick }) {
    const streams = quick ? 2000 : STREAMS;
    const pool = await SseLoadPool.start(Math.max(1, Math.ceil(streams / STREAMS_PER_CLIENT_PROCESS)));
    try {
      // Warm-up, not counted: code paths compiled, pools and caches at their steady size.
      const tokens = await openerTokens(cluster);
      const [warm] = takeStreamBranches(cluster, 1);
      const warmTargets = Array.from({ length: WARM_UP_STREAMS }, (_, i) => ({
        url: cluster.gatewayUrls[i % cluster.gatewayUrls.length]! + `/v1/repositories/${cluster.fixture.repositoryId}/branches/${warm}/room/events`,
        token: tokens[i % tokens.length]!,
      }));
      await pool.open(warmTargets.slice(0, 1), { concurrency: 1, measure: 'count' });
      await pool.open(warmTargets.slice(1), { concurrency: CONCURRENCY, measure: 'count' });
      await pool.closeStreams();
      const nchan = await measureNchanOpens(pool, streams);
      const figures = [];
      for (const principals of [100, 1]) {
        const r = await measureStreamOpens(cluster, pool, { streams, principals });
        const load = await loadAverage();
        await pool.closeStreams();
        const { value, note } = formatOpen(r, nchan, load);
        figures.push({
          name: `${formatCount(streams)} streams opened, ${principals === 1 ? 'one token' : `tokens of ${principals} principals`}, ${ROOMS} rooms`,
          value,
          target: `${formatCount(STREAMS)} in ≤ 3 s, ≤ 300 µs server CPU per open`,
          note,
        });
      }
      return figures;
    } finally {
      await pool.close();
    }
  },
};
