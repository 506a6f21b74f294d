import { ulid } from 'ulid';
import { StreamKeys } from '@chat/backbone';
import { ApiClient } from '../harness/api-client.ts';
import { readMetric } from '../harness/gateway-cluster.ts';
import { startRedisCluster, type RedisCluster } from '../harness/redis-cluster.ts';
import { readRoomHistory } from '../harness/sse-delivery-check.ts';
import { startBenchCluster, type BenchCluster } from './bench-cluster.ts';
import { predictGateways, predictShards, type GatewayPrediction, type HeldStream, type ScaleLoad, type ShardPrediction } from './capacity-model.ts';
import { startPacedWriter, type WriterStats } from './paced-writer.ts';
import { CpuMeter } from './proc-stats.ts';
import { RedisShards, type ShardUsage } from './redis-shards.ts';
import { describeScale, scaleProblems } from './scale-report.ts';
import { SseLoadPool, type PoolOpenResult } from './sse-load-pool.ts';
import type { StreamTarget } from './sse-load-protocol.ts';
import { checkStreamOrder, type StreamOrderCounts } from './stream-order-check.ts';
import {
  benchTokens,
  branchEventsPath,
  branchMessagesPath,
  formatCount,
  formatFailures,
  openerTokens,
  sleep,
  takeStreamBranches,
  warningCounts,
  warningsSince,
} from './stream-rooms.ts';

/** One size of the scale check: `gateways × rooms × perRoom` streams, appends at a steady rate. */
export interface ScaleShape {
  gateways: number;
  rooms: number;
  perRoom: number;
  appendsPerSecond: number;
  /**
   * The writing window the CPU and Redis counters cover: k + ½ lease-renewal periods, so each
   * gateway's renewal rounds in it are k or k + 1 whatever its timer's phase.
   */
  writeSeconds: number;
  /** Load-client processes (each holds its share of the sockets, under the 20,000 open-file cap). */
  clientProcesses: number;
  /** A window with streams open and nothing appended, before writing: each gateway's idle CPU. */
  quietSeconds: number;
}

/** Issue #18's scale test: 4 gateway processes holding 16,000 streams over 2 Redis shards. */
export const FULL_SCALE: ScaleShape = { gateways: 4, rooms: 400, perRoom: 40, appendsPerSecond: 200, writeSeconds: 35, clientProcesses: 4, quietSeconds: 10 };
/** The same check at a size for the test suite (4 gateways × 500 streams). */
export const TEST_SCALE: ScaleShape = { gateways: 4, rooms: 100, perRoom: 20, appendsPerSecond: 100, writeSeconds: 15, clientProcesses: 2, quietSeconds: 5 };

const PARTITIONS = 16;

export interface GatewayFigures {
  gateway: number;
  predicted: GatewayPrediction;
  measured: { streams: number; deliveries: number; cores: number; cpuShare: number; idleCores: number };
}

export interface ShardFigures {
  port: number;
  predicted: ShardPrediction;
  measured: {
    xadd: number;
    /** EVALSHA + EVAL: lease renewals. */
    scriptCalls: number;
    operationsShare: number;
    netOutputBytes: number;
    egressShare: number;
    cores: number;
    keys: { roomSets: string[]; principalSets: string[]; partitions: string[] };
  };
}

export interface ScaleResult {
  shape: ScaleShape;
  opened: number;
  openFailures: Record<string, number>;
  openSeconds: number;
  writer: WriterStats;
  /** The writing window in seconds. */
  seconds: number;
  gateways: GatewayFigures[];
  shards: ShardFigures[];
  order: StreamOrderCounts;
  /** Cores of the other processes over the window (APIs, notifier, dev-core, load clients). */
  otherCores: Record<string, number>;
  /** Streams that ended before the check (none should: the clients do not reconnect). */
  ended: number;
  /** Server warnings logged during the run, by role and message. */
  warnings: string;
}

/**
 * The scale check of docs/capacity.md: a Redis Cluster of 2 masters, dev-core, 2 APIs, a notifier and
 * `shape.gateways` gateways on a scratch database; `rooms × perRoom` streams opened from raw-socket
 * client processes, stream j of room r on gateway (r + j) mod G (an even ingress that spreads each
 * room over every gateway), tokens of 100 principals; then appends at a steady rate through both
 * APIs for the window. Returns each process's measured share next to the model's prediction, and
 * each stream's loss / duplicate / order counts against its room's history.
 */
export async function runCapacityScale(shape: ScaleShape, progress: (line: string) => void = () => undefined): Promise<ScaleResult> {
  // Redis's default node timeout: with 2 masters, a master that misses the other's pings for the
  // timeout (a starved process on a busy machine) counts itself in the minority and refuses every
  // command until it hears from it again; the harness's 1 s suits its failover tests, not this one.
  const redis = await startRedisCluster({ masters: 2, replicas: 0, nodeTimeoutMs: 15_000 });
  try {
    const cluster = await startBenchCluster('distributed', { apis: 2, gateways: shape.gateways, notifiers: 1, redisEnv: redis.env() });
    try {
      return await measureScale(cluster, redis, shape, progress);
    } finally {
      await cluster.stop();
    }
  } finally {
    await redis.stop();
  }
}

async function measureScale(cluster: BenchCluster, redis: RedisCluster, shape: ScaleShape, progress: (line: string) => void): Promise<ScaleResult> {
  const warningsBefore = warningCounts(cluster);
  const redisShards = await RedisShards.open(redis);
  const pool = await SseLoadPool.start(shape.clientProcesses);
  try {
    const gatewayServices = cluster.gatewayUrls.map((url) => cluster.services.find((s) => s.url === url)!);
    const [warmUpBranch, ...branches] = takeStreamBranches(cluster, shape.rooms + 1);
    const openers = await openerTokens(cluster);
    const { readers, writers } = await benchTokens(cluster);
    const placed = placeStreams(shape, branches, openers.length);

    const open = await openPlacedStreams(cluster, pool, placed, openers);
    progress(`${formatCount(open.opened)} streams opened in ${open.seconds.toFixed(1)} s${formatFailures(open.failures)}`);

    // One append per writer, outside the window: each API's first appends (its first calls to core and PostgreSQL) are not measured.
    await Promise.all(writers.map((token, i) => postMessage(cluster.apiUrls[i % cluster.apiUrls.length]! + branchMessagesPath(cluster, warmUpBranch!), token)));

    const meter = new CpuMeter([
      ...gatewayServices.map((g, i) => ({ label: `gateway ${i}`, pid: g.service.pid! })),
      ...cluster.services.filter((s) => s.role === 'api' || s.role === 'notifier').map((s) => ({ label: s.role, pid: s.service.pid! })),
      ...(cluster.devCorePid ? [{ label: 'dev-core', pid: cluster.devCorePid }] : []),
      ...pool.pids.map((pid) => ({ label: 'clients', pid })),
    ]);
    // A quiet window first: what each gateway spends holding its streams with nothing appended.
    await meter.start();
    await sleep(shape.quietSeconds * 1000);
    const idle = await meter.stop();
    const before = await redisShards.read();
    await meter.start();
    const startedAt = performance.now();
    const writer = startPacedWriter({ apiUrls: cluster.apiUrls, paths: branches.map((b) => branchMessagesPath(cluster, b)), tokens: writers, ratePerSecond: shape.appendsPerSecond, maxInFlight: 64 });
    await sleep(shape.writeSeconds * 1000);
    const written = await writer.stop();
    const busy = await meter.stop();
    const after = await redisShards.read();
    const seconds = (performance.now() - startedAt) / 1000;
    progress(`${formatCount(written.created)} appends in ${seconds.toFixed(1)} s${formatFailures(written.failures)}`);

    const histories = await readHistories(cluster, branches, readers[0]!);
    const due = placed.reduce((n, s) => n + histories.get(s.branchId)!.ids.length, 0);
    const deadline = Date.now() + 60_000;
    let report = await pool.report();
    while (report.events < due && report.open > 0 && Date.now() < deadline) {
      await sleep(250);
      report = await pool.report();
    }
    const received = await pool.received();
    const order = checkStreamOrder(placed.map((s) => ({ key: s.key, history: histories.get(s.branchId)!.ids, received: received.get(s.key) ?? [] })));
    progress(`${formatCount(order.received)} of ${formatCount(order.expected)} deliveries received`);

    const load = await modelLoad(cluster, redisShards, { gateways: shape.gateways, placed, histories, seconds });
    return {
      shape,
      opened: open.opened,
      openFailures: open.failures,
      openSeconds: open.seconds,
      writer: written,
      seconds,
      gateways: await gatewayFigures(load, gatewayServices, { idle, busy }),
      shards: await shardFigures(load, redisShards, cluster.keyPrefix!, RedisShards.usage(before, after, seconds)),
      order,
      otherCores: Object.fromEntries(Object.entries(busy).filter(([label]) => !label.startsWith('gateway'))),
      ended: report.ended,
      warnings: warningsSince(cluster, warningsBefore),
    };
  } finally {
    redisShards.close();
    await pool.close();
  }
}

type PlacedStream = ReturnType<typeof placeStreams>[number];
export type RoomHistory = { roomId: string; ids: string[] };

/** Opens every placed stream in `ids` mode; a room's first stream materializes it alone, the rest then open together. */
async function openPlacedStreams(cluster: BenchCluster, pool: SseLoadPool, placed: PlacedStream[], tokens: string[]): Promise<PoolOpenResult> {
  const target = (s: PlacedStream): StreamTarget => ({ url: cluster.gatewayUrls[s.gateway]! + branchEventsPath(cluster, s.branchId), token: tokens[s.opener]!, key: s.key });
  const first = await pool.open(placed.filter((s) => s.index === 0).map(target), { concurrency: 32, measure: 'ids' });
  const rest = await pool.open(placed.filter((s) => s.index > 0).map(target), { concurrency: 32, measure: 'ids' });
  const failures = { ...first.failures };
  for (const [k, v] of Object.entries(rest.failures)) failures[k] = (failures[k] ?? 0) + v;
  return { opened: first.opened + rest.opened, failures, seconds: first.seconds + rest.seconds };
}

/**
 * The run as the model sees it: each stream's gateway and the Redis keys its lease and its room's
 * events use (named as the services name them), the appends per room, and the master serving each
 * key.
 */
async function modelLoad(
  cluster: BenchCluster,
  redisShards: RedisShards,
  run: { gateways: number; placed: PlacedStream[]; histories: Map<string, RoomHistory>; seconds: number },
): Promise<ScaleLoad> {
  const prefix = cluster.keyPrefix!;
  const partitions = new StreamKeys(prefix, PARTITIONS);
  const roomIdOf = (branchId: string) => run.histories.get(branchId)!.roomId;
  const streams: HeldStream[] = run.placed.map((s) => ({
    gateway: s.gateway,
    roomId: roomIdOf(s.branchId),
    roomSetKey: `${prefix}:{cap:r:branch:${cluster.fixture.repositoryId}:${s.branchId}}`,
    // The gateway's principal key is `<kind>:<id>`; the openers are users.
    principalSetKey: `${prefix}:{cap:p:user:${cluster.fixture.openers[s.opener]}}`,
  }));
  const appendsByRoom = new Map([...run.histories.values()].map((h) => [h.roomId, h.ids.length]));
  const partitionKeyOfRoom = new Map([...appendsByRoom.keys()].map((roomId) => [roomId, partitions.stream('messages', partitions.partitionOf(roomId))]));
  const keys = [...new Set([...streams.flatMap((s) => [s.roomSetKey, s.principalSetKey]), ...partitionKeyOfRoom.values()])];
  return { gateways: run.gateways, streams, appendsByRoom, partitionKeyOfRoom, seconds: run.seconds, masterOf: await redisShards.masterOfKeys(keys) };
}

/** Each gateway's own counts (its metrics) and CPU next to the model's prediction. */
async function gatewayFigures(
  load: ScaleLoad,
  services: BenchCluster['services'],
  cores: { idle: Record<string, number>; busy: Record<string, number> },
): Promise<GatewayFigures[]> {
  const predictions = predictGateways(load);
  const busy = services.map((_, i) => cores.busy[`gateway ${i}`]!);
  const total = busy.reduce((a, b) => a + b, 0);
  return Promise.all(
    services.map(async (service, i) => {
      const admin = { adminUrl: service.adminUrl! };
      const delivered = async (from: 'live' | 'store') => readMetric(admin, 'chat_gateway_deliveries_total', { kind: 'message', from });
      return {
        gateway: i,
        predicted: predictions[i]!,
        measured: {
          streams: await readMetric(admin, 'chat_gateway_streams_open'),
          deliveries: (await delivered('live')) + (await delivered('store')),
          cores: busy[i]!,
          cpuShare: busy[i]! / total,
          idleCores: cores.idle[`gateway ${i}`]!,
        },
      };
    }),
  );
}

/** Each master's operations, bytes sent and keys over the window next to the model's prediction. */
async function shardFigures(load: ScaleLoad, redisShards: RedisShards, prefix: string, usage: ShardUsage[]): Promise<ShardFigures[]> {
  const found = {
    roomSets: await redisShards.keysByMaster(`${prefix}:{cap:r:*`),
    principalSets: await redisShards.keysByMaster(`${prefix}:{cap:p:*`),
    partitions: await redisShards.keysByMaster(`${prefix}:{messages:*}:stream`),
  };
  const modelOps = (u: ShardUsage) => (u.calls.xadd ?? 0) + scriptCalls(u);
  const totalOps = usage.reduce((n, u) => n + modelOps(u), 0);
  const totalEgress = usage.reduce((n, u) => n + u.netOutputBytes, 0);
  return predictShards(load, redisShards.ports).map((predicted) => {
    const u = usage.find((x) => x.port === predicted.port)!;
    return {
      port: predicted.port,
      predicted,
      measured: {
        xadd: u.calls.xadd ?? 0,
        scriptCalls: scriptCalls(u),
        operationsShare: modelOps(u) / totalOps,
        netOutputBytes: u.netOutputBytes,
        egressShare: u.netOutputBytes / totalEgress,
        cores: u.cores,
        keys: { roomSets: found.roomSets.get(u.port) ?? [], principalSets: found.principalSets.get(u.port) ?? [], partitions: found.partitions.get(u.port) ?? [] },
      },
    };
  });
}

const scriptCalls = (u: ShardUsage) => (u.calls.evalsha ?? 0) + (u.calls.eval ?? 0);

/** Stream j of room r on gateway (r + j) mod G, with the token of principal (j × rooms + r) mod principals. */
function placeStreams(shape: ScaleShape, branches: string[], principals: number) {
  const placed: Array<{ key: string; branchId: string; index: number; gateway: number; opener: number }> = [];
  for (let j = 0; j < shape.perRoom; j++) {
    branches.forEach((branchId, r) => placed.push({ key: `${r}/${j}`, branchId, index: j, gateway: (r + j) % shape.gateways, opener: (j * shape.rooms + r) % principals }));
  }
  return placed;
}

/** Each room's messageIds in list order and its roomId, 8 rooms at a time. */
export async function readHistories(cluster: BenchCluster, branches: string[], token: string): Promise<Map<string, RoomHistory>> {
  const api = new ApiClient(cluster.apiUrls[0]!);
  const histories = new Map<string, RoomHistory>();
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < branches.length) {
          const branchId = branches[next++]!;
          const items = await readRoomHistory(api, { repositoryId: cluster.fixture.repositoryId, branchId }, token);
          if (items.length === 0) throw new Error(`room of branch ${branchId} got no message`);
          histories.set(branchId, { roomId: items[0]!.roomId, ids: items.map((m) => m.messageId) });
        }
      }),
    );
  } finally {
    api.close();
  }
  return histories;
}

async function postMessage(url: string, token: string): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': ulid() },
    body: JSON.stringify({ bodyMarkdown: 'warm-up' }),
  });
  if (response.status !== 201) throw new Error(`warm-up append answered ${response.status}: ${await response.text()}`);
}

/** `pnpm bench --only scale`: the full size on its own deployment; failed checks are listed as a figure. */
export async function runScaleScenario(options: { quick: boolean; progress: (line: string) => void }): Promise<Array<{ name: string; value: string; target: string; note?: string }>> {
  const result = await runCapacityScale(options.quick ? TEST_SCALE : FULL_SCALE, options.progress);
  const problems = scaleProblems(result);
  return [...describeScale(result), { name: 'scale: model check', value: problems.length === 0 ? 'agrees' : problems.join('; '), target: 'every share as the model predicts, 0 lost' }];
}
