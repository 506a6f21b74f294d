import type { BenchCluster } from './bench-cluster.ts';
import { rssKiB } from './proc-stats.ts';
import { SseLoadPool } from './sse-load-pool.ts';
import { round } from './stats.ts';
import { formatCount, formatFailures, openRoomStreams, sleep, takeStreamBranches } from './stream-rooms.ts';
import type { StreamScenario } from './stream-scenarios.ts';

/** Streams one load-client process holds at most: well below the 20,000 open files a process may have. */
const STREAMS_PER_CLIENT_PROCESS = 4500;

const WARM_UP_STREAMS = 300;

/** RSS once it stops moving: readings 500 ms apart within 1% of each other, or the last after `maxMs`. */
async function steadyRssKiB(pid: number, maxMs: number): Promise<number> {
  const deadline = Date.now() + maxMs;
  let previous = await rssKiB(pid);
  for (;;) {
    await sleep(500);
    const current = await rssKiB(pid);
    if (Math.abs(current - previous) <= previous * 0.01 || Date.now() > deadline) return current;
    previous = current;
  }
}

export interface IdleResult {
  target: number;
  /** Streams open at the client side when RSS was read. */
  held: number;
  openFailures: Record<string, number>;
  openSeconds: number;
  rssBeforeKiB: number;
  rssAfterKiB: number;
  kibPerStream: number;
}

/**
 * Idle streams on ONE gateway process (in the all-in-one mode, the all-in-one process): opens
 * `target` streams on a fresh room, spread over load-client processes, and reads the process's
 * RSS (VmRSS) before and after. Heartbeats and rechecks are slowed in the bench environment, so
 * the streams are truly idle.
 */
export async function measureIdleStreams(cluster: BenchCluster, options: { target: number; settleMs: number }): Promise<IdleResult> {
  const gatewayUrl = cluster.gatewayUrls[0]!;
  const gateway = cluster.services.find((s) => s.url === gatewayUrl);
  if (!gateway?.service.pid) throw new Error(`no process serves ${gatewayUrl}`);
  const pid = gateway.service.pid;
  const pool = await SseLoadPool.start(Math.max(1, Math.ceil(options.target / STREAMS_PER_CLIENT_PROCESS)));
  try {
    const [branch] = takeStreamBranches(cluster, 1);
    // Warm-up on another room: code paths compiled, pools and caches at their steady size, so the
    // baseline holds everything but the streams themselves.
    const [warmBranch] = takeStreamBranches(cluster, 1);
    await openRoomStreams(cluster, pool, { branches: [warmBranch!], perRoom: WARM_UP_STREAMS, gatewayUrls: [gatewayUrl], measure: 'count', concurrency: 16 });
    await pool.closeStreams();
    const rssBeforeKiB = await steadyRssKiB(pid, options.settleMs);
    const open = await openRoomStreams(cluster, pool, { branches: [branch!], perRoom: options.target, gatewayUrls: [gatewayUrl], measure: 'count', concurrency: 16 });
    const rssAfterKiB = await steadyRssKiB(pid, options.settleMs);
    const report = await pool.report();
    return {
      target: options.target,
      held: report.open,
      openFailures: open.failures,
      openSeconds: open.seconds,
      rssBeforeKiB,
      rssAfterKiB,
      kibPerStream: report.open > 0 ? (rssAfterKiB - rssBeforeKiB) / report.open : Number.NaN,
    };
  } finally {
    await pool.close();
  }
}

export const idleScenario: StreamScenario = {
  key: 'idle',
  async run(cluster, { quick }) {
    const r = await measureIdleStreams(cluster, { target: quick ? 1000 : 18_000, settleMs: quick ? 5000 : 20_000 });
    return [
      {
        name: `idle streams on one gateway process (${cluster.mode === 'all-in-one' ? 'the all-in-one process' : 'gateway 1'})`,
        value:
          `${formatCount(r.held)} of ${formatCount(r.target)} held, ${round(r.kibPerStream, 1)} KiB RSS each ` +
          `(RSS ${formatCount(r.rssBeforeKiB / 1024)} → ${formatCount(r.rssAfterKiB / 1024)} MiB; opened in ${round(r.openSeconds, 1)} s` +
          `${formatFailures(r.openFailures)})`,
        target: '18,000 streams at ≤ 10 KiB each',
      },
    ];
  },
};
