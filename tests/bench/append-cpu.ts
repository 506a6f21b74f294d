import type { BenchCluster } from './bench-cluster.ts';
import { pidsOfCommand, postgresPidsOf, WindowCpu } from './proc-stats.ts';
import { serverProcesses } from './stream-rooms.ts';

/**
 * CPU per append by role over a measured window: every server process of the deployment, dev-core,
 * PostgreSQL (the server's shared processes and the backends of the deployment's database; other
 * databases' backends belong to whatever else runs), Redis (the whole instance) and the load client.
 * Shows where an append's CPU goes on a machine whose cores everything shares.
 */
export function appendCpuMeter(cluster: BenchCluster): WindowCpu {
  const database = cluster.databaseUrl ? new URL(cluster.databaseUrl).pathname.slice(1) : undefined;
  return new WindowCpu(async () => [
    ...serverProcesses(cluster),
    ...(cluster.devCorePid ? [{ label: 'dev-core', pid: cluster.devCorePid }] : []),
    ...(database ? await postgresPidsOf(database) : await pidsOfCommand('postgres')).map((pid) => ({ label: 'postgres', pid })),
    ...(await pidsOfCommand('redis-server')).map((pid) => ({ label: 'redis', pid })),
  ]);
}

/** `CPU per append: api 1.71 ms, postgres 0.52 ms, … total 3.1 ms (1.74 of 2 cores)`. */
export function formatCpuPerAppend(usedMs: Record<string, number>, appended: number, seconds: number): string {
  const entries = Object.entries(usedMs)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = entries.reduce((sum, [, ms]) => sum + ms, 0);
  const per = (ms: number) => (appended > 0 ? ms / appended : 0).toFixed(2);
  const parts = entries.map(([label, ms]) => `${label} ${per(ms)} ms`).join(', ');
  return `CPU per append: ${parts}; total ${per(total)} ms (${(total / 1000 / seconds).toFixed(2)} cores)`;
}
