import type { BenchCluster } from './bench-cluster.ts';
import { botThroughputScenario } from './bot-throughput.ts';
import { fanoutScenario } from './fanout-scenario.ts';
import { idleScenario } from './idle-scenario.ts';
import { latencyScenario } from './latency-scenario.ts';
import { leakScenario } from './leak-scenario.ts';
import { mentionLatencyScenario } from './mention-latency.ts';
import { openScenario } from './open-scenario.ts';

export interface StreamScenario {
  key: string;
  run(cluster: BenchCluster, options: { quick: boolean }): Promise<Array<{ name: string; value: string; target: string; note?: string }>>;
}

/** Stream scenarios (fan-out, latency, idle streams, mention latency); filled in as the gateway lands. */
// Idle first: its RSS baseline is cleanest before the other scenarios have grown the heap.
export const scenarios: StreamScenario[] = [idleScenario, openScenario, fanoutScenario, latencyScenario, mentionLatencyScenario, leakScenario, botThroughputScenario];
