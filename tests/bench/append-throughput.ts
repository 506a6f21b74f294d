import { newUlid } from '@chat/contracts';
import { Pool } from 'undici';
import { appendCpuMeter, formatCpuPerAppend } from './append-cpu.ts';
import type { BenchCluster } from './bench-cluster.ts';

export interface AppendThroughputResult {
  rooms: number;
  clients: number;
  seconds: number;
  appended: number;
  failed: number;
  /** Failures by HTTP status (or `network`). */
  failures: Record<string, number>;
  appendsPerSecond: number;
  /** Where the CPU went, per append (see append-cpu.ts). */
  cpuNote: string;
  /** CPU milliseconds over the window by role (see append-cpu.ts). */
  cpuMs: Record<string, number>;
}

/**
 * The load client shares the machine's two cores with the servers, so it is lean: undici pools
 * with keep-alive (no `fetch` objects), one pool per API process. Closed-loop append load: `clients` concurrent writers, each appending as fast as its previous
 * append returns, for `seconds`, through the cluster's API processes in turn, into `rooms` rooms
 * (the repository room alone, or that many branch rooms). `bodyMarkdown` gives each append's body
 * (default a short line).
 */
export async function measureAppendThroughput(
  cluster: BenchCluster,
  options: { rooms: 1 | 100; clients: number; seconds: number; bodyMarkdown?: (client: number, i: number) => string },
): Promise<AppendThroughputResult> {
  const bodyOf = options.bodyMarkdown ?? ((client: number, i: number) => `bench message ${client}-${i}`);
  const { fixture } = cluster;
  const tokens = await Promise.all(fixture.writers.map((subjectId) => cluster.core.mintToken({ type: 'human', subjectId, expiresInSeconds: 3600 })));
  const roomPaths =
    options.rooms === 1
      ? [`/v1/repositories/${fixture.repositoryId}/room/messages`]
      : fixture.branchIds.map((b) => `/v1/repositories/${fixture.repositoryId}/branches/${b}/room/messages`);
  let appended = 0;
  let failed = 0;
  const failures: Record<string, number> = {};
  const deadline = Date.now() + options.seconds * 1000;
  const pools = cluster.apiUrls.map((url) => new Pool(url, { connections: options.clients }));
  const cpu = appendCpuMeter(cluster);
  await cpu.start();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.clients }, async (_, client) => {
      const token = tokens[client % tokens.length]!;
      for (let i = 0; Date.now() < deadline; i++) {
        const pool = pools[(client + i) % pools.length]!;
        const path = roomPaths[(client * 7919 + i) % roomPaths.length]!;
        const response = await pool
          .request({
            method: 'POST',
            path,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': newUlid() },
            body: JSON.stringify({ bodyMarkdown: bodyOf(client, i) }),
          })
          .catch(() => null);
        if (response) await response.body.dump();
        if (response?.statusCode === 201) appended++;
        else {
          failed++;
          const key = response ? String(response.statusCode) : 'network';
          failures[key] = (failures[key] ?? 0) + 1;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = await cpu.stop();
  const cpuNote = formatCpuPerAppend(cpuMs, appended, seconds);
  await Promise.all(pools.map((pool) => pool.close()));
  return { rooms: options.rooms, clients: options.clients, seconds, appended, failed, failures, appendsPerSecond: appended / seconds, cpuNote, cpuMs };
}

/**
 * Closed-loop writer counts the capacity search tries. The service batches appends that are in
 * flight together (one statement, one core call, one publish per batch), so its CPU per append
 * falls as more are in flight: with too few writers the figure measures round trips, not what the
 * service can take. Measured on a machine at the reference's speed, 100 rooms: 32 writers
 * 2,718–3,153/s, 64 writers 3,675–3,701/s, 96–128 writers 4,142–4,499/s.
 */
export const WRITER_COUNTS = [32, 64, 128] as const;

export interface AppendCapacityResult {
  /** The level with the most appends per second. */
  best: AppendThroughputResult;
  /** Every level, in the order measured. */
  levels: AppendThroughputResult[];
}

/** Append throughput at each writer count in turn (same rooms, same window); the best is the capacity. */
export async function measureAppendCapacity(
  cluster: BenchCluster,
  options: { rooms: 1 | 100; seconds: number; writerCounts?: readonly number[]; bodyMarkdown?: (client: number, i: number) => string },
): Promise<AppendCapacityResult> {
  const levels: AppendThroughputResult[] = [];
  for (const clients of options.writerCounts ?? WRITER_COUNTS) levels.push(await measureAppendThroughput(cluster, { ...options, clients }));
  const best = levels.reduce((a, b) => (b.appendsPerSecond > a.appendsPerSecond ? b : a));
  return { best, levels };
}

/** The capacity figure: the best level, its failures, and the whole curve with each level's mean round trip (Little's law). */
export function formatAppendCapacity({ best, levels }: AppendCapacityResult): string {
  const failures: Record<string, number> = {};
  for (const level of levels) for (const [key, n] of Object.entries(level.failures)) failures[key] = (failures[key] ?? 0) + n;
  const failed = levels.reduce((n, l) => n + l.failed, 0);
  const curve = levels.map((l) => `${l.clients}: ${Math.round(l.appendsPerSecond)}/s, ${((l.clients / l.appendsPerSecond) * 1000).toFixed(1)} ms`).join('; ');
  return `${Math.round(best.appendsPerSecond)} appends/s at ${best.clients} closed-loop writers (${failed} failed ${JSON.stringify(failures)}; by writers, throughput and mean round trip: ${curve})`;
}
