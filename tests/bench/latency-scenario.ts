import type { BenchCluster } from './bench-cluster.ts';
import { startPacedWriter } from './paced-writer.ts';
import { CpuMeter, formatCores } from './proc-stats.ts';
import { SseLoadPool } from './sse-load-pool.ts';
import { percentile, round } from './stats.ts';
import { benchTokens, branchMessagesPath, formatCount, formatFailures, openRoomStreams, serverProcesses, sleep, takeStreamBranches, warningCounts, warningsSince } from './stream-rooms.ts';
import type { StreamScenario } from './stream-scenarios.ts';

export interface LatencyResult {
  streams: number;
  opened: number;
  openFailures: Record<string, number>;
  appendsPerSecond: number;
  appendFailures: Record<string, number>;
  /** Receipts measured (one per stream per message). */
  receipts: number;
  /** Receipts expected from the appends created in the window (late ones fall outside it). */
  expectedReceipts: number;
  p50: number;
  p99: number;
  max: number;
  /** Append round trip (POST sent → 201) of the window's appends, p50 and p99. */
  appendP50: number;
  appendP99: number;
  ended: number;
  cores: Record<string, number>;
  /** Server warnings logged during the run (why streams ended early). */
  warnings: string;
}

/**
 * Append-to-receipt latency: `streams` streams on one fresh room (spread over every gateway) while
 * a writer appends at a steady `appendsPerSecond` through every API. Each body carries its send
 * time on the machine's monotonic clock; every client records receipt minus send for every
 * message, and the percentiles are over all clients' receipts in the window.
 */
export async function measureLatency(
  cluster: BenchCluster,
  options: { streams: number; appendsPerSecond: number; warmupMs: number; windowMs: number; clientProcesses: number },
): Promise<LatencyResult> {
  const warningsBefore = warningCounts(cluster);
  const pool = await SseLoadPool.start(options.clientProcesses);
  try {
    const [branch] = takeStreamBranches(cluster, 1);
    const open = await openRoomStreams(cluster, pool, { branches: [branch!], perRoom: options.streams, gatewayUrls: cluster.gatewayUrls, measure: 'latency', concurrency: 32 });
    const { writers } = await benchTokens(cluster);
    const writer = startPacedWriter({ apiUrls: cluster.apiUrls, paths: [branchMessagesPath(cluster, branch!)], tokens: writers, ratePerSecond: options.appendsPerSecond, maxInFlight: 64 });
    let stats;

    let cores;
    try {
      await sleep(options.warmupMs);
      const meter = new CpuMeter([...serverProcesses(cluster), { label: 'bench', pid: process.pid }]);
      writer.reset();
      await pool.reset();
      await meter.start();
      await sleep(options.windowMs);
      stats = writer.stats();
      cores = await meter.stop();
    } finally {
      await writer.stop();
    }
    // Let the last appends of the window arrive; they were sent inside it, so they count.
    await sleep(1000);
    const report = await pool.report();
    cores.clients = report.clientCores;
    return {
      streams: options.streams,
      opened: open.opened,
      openFailures: open.failures,
      appendsPerSecond: stats.appendsPerSecond,
      appendFailures: stats.failures,
      receipts: report.latency.count,
      expectedReceipts: stats.created * open.opened,
      p50: report.latency.percentile(50),
      p99: report.latency.percentile(99),
      max: report.latency.percentile(100),
      appendP50: percentile(stats.roundTripsMs, 50),
      appendP99: percentile(stats.roundTripsMs, 99),
      ended: report.ended,
      cores,
      warnings: warningsSince(cluster, warningsBefore),
    };
  } finally {
    await pool.close();
  }
}

export const latencyScenario: StreamScenario = {
  key: 'latency',
  async run(cluster, { quick }) {
    const r = await measureLatency(cluster, {
      streams: quick ? 200 : 1000,
      appendsPerSecond: 100,
      clientProcesses: 2,
      ...(quick ? { warmupMs: 1500, windowMs: 4000 } : { warmupMs: 3000, windowMs: 15_000 }),
    });
    return [
      {
        name: `append-to-receipt latency, 100 appends/s, 1 room × ${r.streams} streams`,
        value:
          `p50 ${round(r.p50, 1)} ms, p99 ${round(r.p99, 1)} ms, max ${round(r.max, 1)} ms ` +
          `(append POST → 201 alone: p50 ${round(r.appendP50, 1)} ms, p99 ${round(r.appendP99, 1)} ms; ${formatCount(r.receipts)} receipts of ${formatCount(r.expectedReceipts)} due; ${round(r.appendsPerSecond, 1)} appends/s created` +
          `${formatFailures(r.appendFailures)}; ${r.opened}/${r.streams} streams opened${formatFailures(r.openFailures)}, ${r.ended} ended early)`,
        target: 'p99 ≤ 100 ms',
        note: `CPU cores in window: ${formatCores(r.cores)}${r.warnings ? `; server warnings: ${r.warnings}` : ''}`,
      },
    ];
  },
};
