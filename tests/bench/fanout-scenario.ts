import type { BenchCluster } from './bench-cluster.ts';
import { startPacedWriter } from './paced-writer.ts';
import { CpuMeter, formatCores } from './proc-stats.ts';
import { SseLoadPool } from './sse-load-pool.ts';
import { benchTokens, branchMessagesPath, formatCount, formatFailures, openRoomStreams, serverProcesses, sleep, takeStreamBranches, warningCounts, warningsSince } from './stream-rooms.ts';
import type { StreamScenario } from './stream-scenarios.ts';

/** One fan-out shape and the steady append load that drives it. */
export interface FanoutShape {
  rooms: number;
  perRoom: number;
  /** Appends per second over all rooms (open loop). */
  appendsPerSecond: number;
  maxInFlight: number;
  warmupMs: number;
  windowMs: number;
  /** Load-client processes. */
  clientProcesses: number;
}

export interface FanoutResult {
  shape: FanoutShape;
  opened: number;
  openFailures: Record<string, number>;
  openSeconds: number;
  deliveriesPerSecond: number;
  /** Appends created per second during the window. */
  appendsPerSecond: number;
  appendFailures: Record<string, number>;
  skippedAppends: number;
  /** Streams that ended during the run (slow-consumer closes, errors). */
  ended: number;
  /** Cores used per process role during the window (`clients` = the load clients). */
  cores: Record<string, number>;
  /** Server warnings logged during the run (why streams ended early). */
  warnings: string;
}

/**
 * Fan-out: `rooms` fresh rooms with `perRoom` streams each, spread over every gateway, while writers
 * append at a steady rate through every API. After a warm-up, counts `message` events received by
 * all clients over a fixed window.
 */
export async function measureFanout(cluster: BenchCluster, shape: FanoutShape): Promise<FanoutResult> {
  const warningsBefore = warningCounts(cluster);
  const pool = await SseLoadPool.start(shape.clientProcesses);
  try {
    const branches = takeStreamBranches(cluster, shape.rooms);
    const open = await openRoomStreams(cluster, pool, { branches, perRoom: shape.perRoom, gatewayUrls: cluster.gatewayUrls, measure: 'count', concurrency: 32 });
    const { writers } = await benchTokens(cluster);
    const writer = startPacedWriter({
      apiUrls: cluster.apiUrls,
      paths: branches.map((b) => branchMessagesPath(cluster, b)),
      tokens: writers,
      ratePerSecond: shape.appendsPerSecond,
      maxInFlight: shape.maxInFlight,
    });
    try {
      await sleep(shape.warmupMs);
      const meter = new CpuMeter([...serverProcesses(cluster), { label: 'bench', pid: process.pid }]);
      writer.reset();
      await pool.reset();
      await meter.start();
      await sleep(shape.windowMs);
      const report = await pool.report();
      const written = writer.stats();
      const cores = await meter.stop();
      cores.clients = report.clientCores;
      return {
        shape,
        opened: open.opened,
        openFailures: open.failures,
        openSeconds: open.seconds,
        deliveriesPerSecond: report.eventsPerSecond,
        appendsPerSecond: written.appendsPerSecond,
        appendFailures: written.failures,
        skippedAppends: written.skipped,
        ended: report.ended,
        cores,
        warnings: warningsSince(cluster, warningsBefore),
      };
    } finally {
      await writer.stop();
    }
  } finally {
    await pool.close();
  }
}

function describe(r: FanoutResult): { value: string; note: string } {
  const expected = r.shape.rooms * r.shape.perRoom;
  const perAppend = r.appendsPerSecond * r.shape.perRoom;
  // What one core of the serving process turns out: the ceiling if the append path were not the limit.
  const serverCores = r.cores.gateway ?? r.cores['all-in-one'] ?? Number.NaN;
  return {
    value:
      `${formatCount(r.deliveriesPerSecond)} deliveries/s ` +
      `(${formatCount(r.appendsPerSecond)} appends/s created of ${formatCount(r.shape.appendsPerSecond)} offered → ${formatCount(perAppend)}/s due; ` +
      `${r.opened}/${expected} streams opened${formatFailures(r.openFailures)}, ${r.ended} ended early` +
      `${r.skippedAppends ? `, ${r.skippedAppends} appends skipped at the in-flight cap` : ''}${formatFailures(r.appendFailures)})`,
    note: `${formatCount(r.deliveriesPerSecond / serverCores)} deliveries per ${r.cores.gateway === undefined ? 'all-in-one' : 'gateway'} CPU-second; CPU cores in window: ${formatCores(r.cores)}${r.warnings ? `; server warnings: ${r.warnings}` : ''}`,
  };
}

export const fanoutScenario: StreamScenario = {
  key: 'fanout',
  async run(cluster, { quick }) {
    const timing = quick ? { warmupMs: 1500, windowMs: 4000 } : { warmupMs: 5000, windowMs: 15_000 };
    const oneRoom = await measureFanout(cluster, {
      rooms: 1,
      perRoom: quick ? 200 : 1000,
      appendsPerSecond: 150,
      maxInFlight: 64,
      clientProcesses: 2,
      ...timing,
    });
    // Two streams per room: deliveries are bounded by twice the append rate the API sustains.
    const manyRooms = await measureFanout(cluster, {
      rooms: quick ? 100 : 1000,
      perRoom: 2,
      appendsPerSecond: 1500,
      maxInFlight: 64,
      clientProcesses: 2,
      ...timing,
    });
    return [
      { name: `fan-out, 1 room × ${oneRoom.shape.perRoom} streams`, target: '≥ 100,000/s (1 room × 1,000)', ...describe(oneRoom) },
      { name: `fan-out, ${manyRooms.shape.rooms} rooms × 2 streams`, target: 'none set (≤ 2 × append rate)', ...describe(manyRooms) },
    ];
  },
};
