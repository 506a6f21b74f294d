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
}

/**
 * The load client shares the machine's two cores with the servers, so it is lean: undici pools
 * with keep-alive (no `fetch` objects), one pool per API process. Closed-loop append load: `clients` concurrent writers, each appending as fast as its previous
 * append returns, for `seconds`, through the cluster's API processes in turn, into `rooms` rooms
 * (the repository room alone, or that many branch rooms).
 */
export async function measureAppendThroughput(
  cluster: BenchCluster,
  options: { rooms: 1 | 100; clients: number; seconds: number },
): Promise<AppendThroughputResult> {
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
            body: JSON.stringify({ bodyMarkdown: `bench message ${client}-${i}` }),
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
  const cpuNote = formatCpuPerAppend(await cpu.stop(), appended, seconds);
  await Promise.all(pools.map((pool) => pool.close()));
  return { rooms: options.rooms, clients: options.clients, seconds, appended, failed, failures, appendsPerSecond: appended / seconds, cpuNote };
}
