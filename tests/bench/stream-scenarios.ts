import type { BenchCluster } from './bench-cluster.ts';

export interface StreamScenario {
  key: string;
  run(cluster: BenchCluster, options: { quick: boolean }): Promise<Array<{ name: string; value: string; target: string; note?: string }>>;
}

/** Stream scenarios (fan-out, latency, idle streams, mention latency); filled in as the gateway lands. */
export const scenarios: StreamScenario[] = [];
