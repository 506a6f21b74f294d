import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchCluster } from './bench-cluster.ts';
import { rssKiB } from './proc-stats.ts';
import { SseLoadPool } from './sse-load-pool.ts';
import { formatCount, formatFailures, openRoomStreams, sleep, takeStreamBranches } from './stream-rooms.ts';
import type { StreamScenario } from './stream-scenarios.ts';

/** What "back to baseline" is read from: the gateway's own gauges (prom-client default metrics included). */
interface GatewayGauges {
  handles: number;
  timers: number;
  openFds: number;
  heapUsedMiB: number;
  streamsOpen: number;
  scopesOpen: number;
  rssMiB: number;
}

function gauge(metrics: string, name: string, labels = ''): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name}{`)));
  if (!line) return Number.NaN;
  if (labels === '' && line.startsWith(`${name}{`)) {
    // A labelled gauge read without labels: the sum over its series.
    return metrics
      .split('\n')
      .filter((l) => l.startsWith(`${name}{`))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  }
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function readGauges(adminUrl: string, pid: number): Promise<GatewayGauges> {
  const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
  return {
    handles: gauge(metrics, 'chat_gateway_nodejs_active_handles_total'),
    timers: gauge(metrics, 'chat_gateway_nodejs_active_resources', '{type="Timeout"}'),
    openFds: gauge(metrics, 'chat_gateway_process_open_fds'),
    heapUsedMiB: gauge(metrics, 'chat_gateway_nodejs_heap_size_used_bytes') / 2 ** 20,
    streamsOpen: gauge(metrics, 'chat_gateway_streams_open'),
    scopesOpen: gauge(metrics, 'chat_gateway_scopes_open'),
    rssMiB: (await rssKiB(pid)) / 1024,
  };
}

/**
 * Makes the gateway collect all its garbage: it writes a heap snapshot on SIGUSR2 (see the bench
 * cluster), and a snapshot starts with a full GC. Waits for the file to be complete, then removes it.
 */
async function collectGarbage(pid: number, diagnosticDir: string): Promise<void> {
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 120_000;
  let lastSize = -1;
  for (;;) {
    await sleep(500);
    const files = (await readdir(diagnosticDir)).filter((f) => f.endsWith('.heapsnapshot'));
    if (files.length > 0) {
      const size = (await stat(join(diagnosticDir, files[0]!))).size;
      // A snapshot is written in one go on the main thread; a size that stopped moving is complete.
      if (size > 0 && size === lastSize) {
        await Promise.all(files.map((f) => rm(join(diagnosticDir, f), { force: true })));
        return;
      }
      lastSize = size;
    }
    if (Date.now() > deadline) throw new Error('the gateway wrote no heap snapshot');
  }
}

/**
 * Seconds the gauges must hold still: longer than what the gateway keeps idle on purpose, since a
 * burst of opens widens its pools: the database pool's idle clients (30 s, each a socket and a
 * timer) and the core client's keep-alive connections (core's keep-alive, 5 s for dev-core).
 */
const STEADY_SECONDS = 32;

/** Gauges once the gateway has let go: streams and scopes at 0 and handles steady for STEADY_SECONDS, then garbage collected. */
async function settledGauges(adminUrl: string, pid: number, diagnosticDir: string, maxMs: number): Promise<GatewayGauges> {
  const deadline = Date.now() + maxMs;
  let previous = await readGauges(adminUrl, pid);
  let steady = 0;
  for (;;) {
    await sleep(1000);
    const current = await readGauges(adminUrl, pid);
    const idle = current.streamsOpen === 0 && current.scopesOpen === 0 && current.handles === previous.handles;
    steady = idle ? steady + 1 : 0;
    if (steady >= STEADY_SECONDS || Date.now() > deadline) break;
    previous = current;
  }
  await collectGarbage(pid, diagnosticDir);
  return readGauges(adminUrl, pid);
}

export interface LeakResult {
  streams: number;
  openFailures: Record<string, number>;
  before: GatewayGauges;
  after: GatewayGauges;
}

/**
 * Opens and closes `waves` × `perWave` streams on ONE gateway process (spread over rooms, so scopes
 * come and go too), then compares the gateway's handles, timers, file descriptors, open streams and
 * scopes (its backbone subscriptions) and heap with the baseline taken after a warm-up.
 */
export async function measureStreamLeak(cluster: BenchCluster, options: { waves: number; perWave: number; rooms: number }): Promise<LeakResult> {
  const gateway = cluster.services.find((s) => s.role === 'gateway');
  if (!gateway?.adminUrl || !gateway.diagnosticDir || !gateway.service.pid || !gateway.url) throw new Error('the leak check needs a gateway process with an admin port');
  const { adminUrl, url, diagnosticDir } = gateway;
  const pid = gateway.service.pid;
  const pool = await SseLoadPool.start(Math.max(1, Math.ceil(options.perWave / 4500)));
  const failures: Record<string, number> = {};
  let streams = 0;
  try {
    const warm = takeStreamBranches(cluster, 1);
    await openRoomStreams(cluster, pool, { branches: warm, perRoom: 300, gatewayUrls: [url], measure: 'count', concurrency: 16 });
    await pool.closeStreams();
    const before = await settledGauges(adminUrl, pid, diagnosticDir, 90_000);
    for (let wave = 0; wave < options.waves; wave++) {
      const branches = takeStreamBranches(cluster, options.rooms);
      const open = await openRoomStreams(cluster, pool, { branches, perRoom: Math.ceil(options.perWave / options.rooms), gatewayUrls: [url], measure: 'count', concurrency: 16 });
      streams += open.opened;
      for (const [k, v] of Object.entries(open.failures)) failures[k] = (failures[k] ?? 0) + v;
      await pool.closeStreams();
    }
    const after = await settledGauges(adminUrl, pid, diagnosticDir, 120_000);
    return { streams, openFailures: failures, before, after };
  } finally {
    await pool.close();
  }
}

const fmt = (g: GatewayGauges): string =>
  `handles ${g.handles}, timers ${g.timers}, fds ${g.openFds}, streams ${g.streamsOpen}, scopes ${g.scopesOpen}, heap ${g.heapUsedMiB.toFixed(1)} MiB, RSS ${g.rssMiB.toFixed(0)} MiB`;

export const leakScenario: StreamScenario = {
  key: 'leak',
  async run(cluster, { quick }) {
    if (cluster.mode === 'all-in-one') return [];
    const r = await measureStreamLeak(cluster, quick ? { waves: 2, perWave: 500, rooms: 5 } : { waves: 5, perWave: 2000, rooms: 20 });
    const { before, after } = r;
    const back =
      after.streamsOpen === 0 &&
      after.scopesOpen === 0 &&
      after.handles <= before.handles + 2 &&
      after.timers <= before.timers + 2 &&
      after.openFds <= before.openFds + 2 &&
      // Both heaps are read right after a full GC: what stays is live. 10,000 leaked streams of even
      // 1 KiB each would be ~10 MiB.
      after.heapUsedMiB <= before.heapUsedMiB + 4;
    return [
      {
        name: 'streams opened and closed on gateway 1: back to baseline',
        value: `${back ? 'yes' : 'NO'}: ${formatCount(r.streams)} streams${formatFailures(r.openFailures)}; before: ${fmt(before)}; after: ${fmt(after)}`,
        target: '10,000 streams; handles, timers, subscriptions, memory back to baseline',
      },
    ];
  },
};
