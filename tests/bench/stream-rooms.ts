import type { BenchCluster } from './bench-cluster.ts';
import type { SseLoadPool, PoolOpenResult } from './sse-load-pool.ts';
import type { MeasureMode, StreamTarget } from './sse-load-protocol.ts';

const taken = new WeakMap<BenchCluster, number>();
const tokenCache = new WeakMap<BenchCluster, Promise<{ readers: string[]; writers: string[] }>>();

/**
 * Branches whose rooms no scenario has used yet in this cluster, so a stream without a cursor
 * replays nothing and every figure starts from an empty room.
 */
export function takeStreamBranches(cluster: BenchCluster, count: number): string[] {
  const from = taken.get(cluster) ?? 0;
  const branches = cluster.fixture.streamBranchIds.slice(from, from + count);
  if (branches.length < count) throw new Error(`the bench fixture has only ${cluster.fixture.streamBranchIds.length - from} unused stream branches left`);
  taken.set(cluster, from + count);
  return branches;
}

/** One token per reader (read members) and per writer, minted once per cluster. */
export function benchTokens(cluster: BenchCluster): Promise<{ readers: string[]; writers: string[] }> {
  let tokens = tokenCache.get(cluster);
  if (!tokens) {
    const mint = (subjectId: string) => cluster.core.mintToken({ type: 'human', subjectId, expiresInSeconds: 3600 });
    tokens = (async () => ({
      readers: await Promise.all(cluster.fixture.targets.map(mint)),
      writers: await Promise.all(cluster.fixture.writers.map(mint)),
    }))();
    tokenCache.set(cluster, tokens);
  }
  return tokens;
}

const openerTokenCache = new WeakMap<BenchCluster, Promise<string[]>>();

/** One token per opener principal of the fixture, minted once per cluster. */
export function openerTokens(cluster: BenchCluster): Promise<string[]> {
  let tokens = openerTokenCache.get(cluster);
  if (!tokens) {
    tokens = Promise.all(cluster.fixture.openers.map((subjectId) => cluster.core.mintToken({ type: 'human', subjectId, expiresInSeconds: 3600 })));
    openerTokenCache.set(cluster, tokens);
  }
  return tokens;
}

export const branchMessagesPath = (cluster: BenchCluster, branchId: string): string =>
  `/v1/repositories/${cluster.fixture.repositoryId}/branches/${branchId}/room/messages`;

export const branchEventsPath = (cluster: BenchCluster, branchId: string): string =>
  `/v1/repositories/${cluster.fixture.repositoryId}/branches/${branchId}/room/events`;

/**
 * Opens `perRoom` streams on each branch room through `gatewayUrls` in turn. The first stream of
 * each room opens alone (it materializes the virtual room), the rest then open together.
 */
export async function openRoomStreams(
  cluster: BenchCluster,
  pool: SseLoadPool,
  options: { branches: string[]; perRoom: number; gatewayUrls: string[]; measure: MeasureMode; concurrency: number },
): Promise<PoolOpenResult> {
  const { readers } = await benchTokens(cluster);
  let n = 0;
  const target = (branchId: string): StreamTarget => {
    const i = n++;
    return { url: options.gatewayUrls[i % options.gatewayUrls.length]! + branchEventsPath(cluster, branchId), token: readers[i % readers.length]! };
  };
  const first = await pool.open(options.branches.map(target), options);
  const rest: StreamTarget[] = [];
  for (let k = 1; k < options.perRoom; k++) for (const b of options.branches) rest.push(target(b));
  const second = await pool.open(rest, options);
  const failures = { ...first.failures };
  for (const [k, v] of Object.entries(second.failures)) failures[k] = (failures[k] ?? 0) + v;
  return { opened: first.opened + second.opened, failures, seconds: first.seconds + second.seconds };
}

/** The processes of a cluster by role, for CPU and RSS readings. */
export function serverProcesses(cluster: BenchCluster): Array<{ label: string; pid: number }> {
  return cluster.services.filter((s) => s.service.pid !== undefined && !s.service.hasExited).map((s) => ({ label: s.role, pid: s.service.pid! }));
}

export const formatCount = (n: number): string => Math.round(n).toLocaleString('en-US');

export const formatFailures = (failures: Record<string, number>): string =>
  Object.keys(failures).length === 0 ? '' : ` failures ${JSON.stringify(failures)}`;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Warning and error messages in the servers' kept output (pino JSON lines, level ≥ 40), counted by
 * role and message; the output kept is a bounded tail, so counts are a lower bound.
 */
export function warningCounts(cluster: BenchCluster): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { role, service } of cluster.services) {
    for (const line of service.log.split('\n')) {
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (!level || Number(level) < 40) continue;
      const key = `${role}: ${/"msg":"([^"]*)"/.exec(line)?.[1] ?? '?'}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/** The warnings logged since `before` (from {@link warningCounts}), to say why streams ended early. */
export function warningsSince(cluster: BenchCluster, before: Map<string, number>): string {
  return [...warningCounts(cluster)]
    .map(([k, n]) => [k, n - (before.get(k) ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ×${n}`)
    .join('; ');
}
