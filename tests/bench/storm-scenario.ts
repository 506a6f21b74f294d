import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { ulid } from 'ulid';
import { metricValue, scrapeMetrics } from '../harness/gateway-cluster.ts';
import { startBenchCluster, type BenchCluster } from './bench-cluster.ts';
import { startPacedWriter, type WriterStats } from './paced-writer.ts';
import { RoundRobinBalancers } from './round-robin-balancers.ts';
import { readHistories } from './scale-scenario.ts';
import { SseLoadPool, type PoolOpenResult } from './sse-load-pool.ts';
import type { ResumeRecord, StreamTarget } from './sse-load-protocol.ts';
import type { LatencyHistogram } from './latency-histogram.ts';
import { benchTokens, branchEventsPath, branchMessagesPath, formatCount, formatFailures, openerTokens, sleep, takeStreamBranches } from './stream-rooms.ts';

/** One size of the storm: `streams` over `rooms` behind round-robin balancers in front of 2 gateways. */
export interface StormShape {
  streams: number;
  rooms: number;
  /** Appends offered per second over every room, from before the kill to after the last reconnect. */
  appendsPerSecond: number;
  /** Load-client processes, and as many balancer processes (each worker talks to its own). */
  clientProcesses: number;
  /** The gateways' GATEWAY_DRAIN_MS: the window the SIGTERMed gateway spreads its handoffs over. */
  drainMs: number;
}

/** Issue #31's storm: 20,000 streams over 2 gateways (the drain window of infra/k8s's ConfigMap). */
export const FULL_STORM: StormShape = { streams: 20_000, rooms: 50, appendsPerSecond: 20, clientProcesses: 4, drainMs: 30_000 };
/** The same storm at the test suite's size. */
export const TEST_STORM: StormShape = { streams: 2_000, rooms: 10, appendsPerSecond: 20, clientProcesses: 1, drainMs: 30_000 };

/** The gateways' open rate and burst at their defaults (the bench raises them for its open figures). */
const STORM_GATEWAY_ENV = { GATEWAY_STREAM_OPENS_PER_SECOND: '1000', GATEWAY_STREAM_OPEN_BURST: '2000' };
/** How long the scenario waits for every client to be back before it gives up and reports. */
const RECOVERY_DEADLINE_MS = 90_000;
const POLL_MS = 250;
/**
 * How often the gateway taking the reconnects is scraped. Its queue gauge is the peak since the
 * previous scrape, so a slower scrape misses nothing; a scrape costs the gateway work in proportion
 * to its sockets (the process collectors list every handle and descriptor), and at several a second
 * that work would be the bench's, not the storm's. Prometheus scrapes every 15–30 s.
 */
const SCRAPE_MS = 1000;

/** Everything the storm figures are computed from (storm-report.ts). */
export interface StormRun {
  shape: StormShape;
  opened: PoolOpenResult;
  writer: WriterStats;
  records: ResumeRecord[];
  /** Each stream's room history, by stream key. */
  histories: Map<string, readonly string[]>;
  kill: StormPhase & {
    /** Commit → receipt over the streams the survivor held before the kill, from the kill to the end of the phase. */
    heldLatency: LatencyHistogram;
    /**
     * The survivor's own account of the same phase: its live room events by commit → written to the
     * last of its streams of the room (`chat_gateway_delivery_latency_seconds`, one sample per event),
     * cumulative by bucket; undefined when its admin server could not be read.
     */
    survivorDeliveries: DeliveryBuckets | undefined;
    /** Commit → receipt over every stream in the 2 s before the kill. */
    beforeLatency: LatencyHistogram;
  };
  term: StormPhase & { exitedAt: number };
  /** Peak of dev-core's authorization calls (`authorize` + `authorizeBatch`) in any 1 s, over both phases. */
  corePeakCallsPerSecond: number;
  /**
   * The most authorizations waiting for core at once in the gateway taking the reconnects (its
   * `chat_gateway_core_queue_peak`, read every SCRAPE_MS), and its bound; undefined when unreadable.
   */
  coreQueue: { peak: number; bound: number } | undefined;
  /** `stream lease trouble` lines in every gateway's log, and every other warning by message. */
  leaseTrouble: number;
  warnings: Map<string, number>;
}

/** A cumulative latency histogram's buckets: how many samples took at most `le` seconds. */
export type DeliveryBuckets = Array<{ le: number; count: number }>;

export interface StormPhase {
  startedAt: number;
  endedAt: number;
  /**
   * The gateway that stayed up: its streams closed during the phase, by reason (its metrics);
   * undefined when its admin server could not be read (a process at its open-file cap refuses it).
   */
  survivorCloses: Record<string, number> | undefined;
}

type GatewayEntry = BenchCluster['services'][number];

/**
 * The SRE's day of issue #31, on 2 gateways behind round-robin balancers, 2 APIs and dev-core: `streams` held by raw-socket clients that reconnect as the SDK does, appends at a
 * steady rate to every room throughout. Gateway 0 is SIGKILLed; once every client is back (on
 * gateway 1) gateway 0 is started again and gateway 1 is SIGTERMed, so its drain hands every stream
 * off to gateway 0. Returns what every client saw, for storm-report.ts.
 */
export async function runGatewayStorm(shape: StormShape, progress: (line: string) => void = () => undefined): Promise<StormRun> {
  // No notifier: nothing here mentions anyone, and room streams do not involve it.
  const cluster = await startBenchCluster('distributed', { apis: 2, gateways: 2, notifiers: 0, gatewayEnv: { ...STORM_GATEWAY_ENV, GATEWAY_DRAIN_MS: String(shape.drainMs) } });
  const logFiles: string[] = [];
  try {
    const balancers = await RoundRobinBalancers.start(shape.clientProcesses, cluster.gatewayUrls);
    const pool = await SseLoadPool.start(shape.clientProcesses);
    try {
      return await storm(cluster, balancers, pool, shape, logFiles, progress);
    } finally {
      await pool.close();
      await balancers.close();
    }
  } finally {
    await cluster.stop();
  }
}

async function storm(cluster: BenchCluster, balancers: RoundRobinBalancers, pool: SseLoadPool, shape: StormShape, logFiles: string[], progress: (line: string) => void): Promise<StormRun> {
  const [victim, survivor] = cluster.services.filter((s) => s.role === 'gateway') as [GatewayEntry, GatewayEntry];
  const [warmUpBranch, ...branches] = takeStreamBranches(cluster, shape.rooms + 1);
  const openers = await openerTokens(cluster);
  const { readers, writers } = await benchTokens(cluster);
  const perRoom = Math.ceil(shape.streams / shape.rooms);
  const placed = Array.from({ length: shape.streams }, (_, i) => ({ key: `${i % shape.rooms}/${Math.floor(i / shape.rooms)}`, branchId: branches[i % shape.rooms]!, first: i < shape.rooms }));
  // Target i of a list goes to worker i mod W (the pool deals them so), which talks to balancer i mod W.
  const targets = (list: typeof placed): StreamTarget[] =>
    list.map((s, i) => ({ url: balancers.urls[i % balancers.urls.length]! + branchEventsPath(cluster, s.branchId), token: openers[i % openers.length]!, key: s.key }));
  const first = await pool.open(targets(placed.filter((s) => s.first)), { concurrency: 16, measure: 'resume' });
  const rest = await pool.open(targets(placed.filter((s) => !s.first)), { concurrency: 64, measure: 'resume' });
  const opened = { opened: first.opened + rest.opened, failures: { ...first.failures, ...rest.failures }, seconds: first.seconds + rest.seconds };
  progress(`${formatCount(opened.opened)} streams (${shape.rooms} rooms × ${perRoom}) opened through ${balancers.urls.length} balancer(s) in ${opened.seconds.toFixed(1)} s${formatFailures(opened.failures)}`);

  await Promise.all(writers.map((token, i) => postWarmUp(cluster.apiUrls[i % cluster.apiUrls.length]! + branchMessagesPath(cluster, warmUpBranch!), token)));
  const writer = startPacedWriter({ apiUrls: cluster.apiUrls, paths: branches.map((b) => branchMessagesPath(cluster, b)), tokens: writers, ratePerSecond: shape.appendsPerSecond, maxInFlight: 64 });
  const core = watchCoreCalls(cluster);
  try {
    await sleep(1000);
    // The same receipts before the kill, every stream on its first connection: the storm's yardstick.
    await pool.reset();
    await sleep(2000);
    const beforeLatency = (await pool.report()).latency;

    // SIGKILL: gateway 0's clients are cut at once and come back through the balancers to gateway 1.
    const survivorBeforeKill = await scrapeGateway(survivor);
    const queueWhileKilled = watchCoreQueue(survivor);
    await pool.reset();
    const killStart = Date.now();
    logFiles.push(victim.service.logFile);
    const killed = once(victim.service.process, 'exit');
    // CLOCK_MONOTONIC, the clock of --cpu-prof profiles' timestamps: where the storm starts in a profile.
    progress(`SIGKILL of gateway 0 at monotonic ${process.hrtime.bigint() / 1000n} µs`);
    victim.service.process.kill('SIGKILL');
    await killed;
    const back = await waitUntilAllOpen(pool, shape.streams);
    progress(`SIGKILL: every client open again ${back ? `${((Date.now() - killStart) / 1000).toFixed(1)} s after the kill` : 'NOT within the deadline'}`);
    await sleep(2000);
    const heldLatency = (await pool.report()).latency;
    const killQueue = await queueWhileKilled.stop();
    const survivorAfterKill = await scrapeGateway(survivor);
    const kill = {
      startedAt: killStart,
      endedAt: Date.now(),
      survivorCloses: subtract(closesIn(survivorAfterKill), closesIn(survivorBeforeKill)),
      heldLatency,
      beforeLatency,
      survivorDeliveries: bucketsSince(deliveriesIn(survivorAfterKill), deliveriesIn(survivorBeforeKill)),
    };

    // SIGTERM: gateway 0 back; gateway 1, now holding every stream, drains them over its window.
    await victim.restart!();
    await sleep(1000);
    const closesBeforeTerm = closesIn(await scrapeGateway(victim));
    const queueWhileTerminated = watchCoreQueue(victim);
    const termStart = Date.now();
    logFiles.push(survivor.service.logFile);
    const exited = once(survivor.service.process, 'exit');
    survivor.service.process.kill('SIGTERM');
    // A drain that does not finish is reported by its time; the process is not left behind.
    const overdue = setTimeout(() => survivor.service.process.kill('SIGKILL'), shape.drainMs + 30_000);
    await exited;
    clearTimeout(overdue);
    const exitedAt = Date.now();
    const backAgain = await waitUntilAllOpen(pool, shape.streams);
    progress(`SIGTERM: drained in ${((exitedAt - termStart) / 1000).toFixed(1)} s; every client open again: ${backAgain ? 'yes' : 'NOT within the deadline'}`);
    const termQueue = await queueWhileTerminated.stop();
    const term = { startedAt: termStart, endedAt: Date.now(), exitedAt, survivorCloses: subtract(closesIn(await scrapeGateway(victim)), closesBeforeTerm) };
    const coreQueue = killQueue && termQueue ? { peak: Math.max(killQueue.peak, termQueue.peak), bound: killQueue.bound } : undefined;
    await sleep(2000);
    const written = await writer.stop();
    progress(`${formatCount(written.created)} appends at ${written.appendsPerSecond.toFixed(1)}/s${formatFailures(written.failures)}`);
    await waitForQuiet(pool);
    logFiles.push(victim.service.logFile);

    const records = await pool.resumed();
    const roomHistories = await readHistories(cluster, branches, readers[0]!);
    const histories = new Map(placed.map((s) => [s.key, roomHistories.get(s.branchId)!.ids] as const));
    const logs = await countWarnings(logFiles);
    return { shape, opened, writer: written, records, histories, kill, term, corePeakCallsPerSecond: core.stop(), coreQueue, leaseTrouble: logs.get('stream lease trouble') ?? 0, warnings: logs };
  } finally {
    core.stop();
    await writer.stop();
  }
}

/** Polls until every stream is open (true), or the deadline passes (false). */
async function waitUntilAllOpen(pool: SseLoadPool, streams: number): Promise<boolean> {
  const deadline = Date.now() + RECOVERY_DEADLINE_MS;
  while (Date.now() < deadline) {
    await sleep(POLL_MS);
    if ((await pool.report()).open >= streams) return true;
  }
  return false;
}

/** Waits until no client has received anything for a second (the last appends delivered), at most 30 s. */
async function waitForQuiet(pool: SseLoadPool): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = -1;
  while (Date.now() < deadline) {
    const { events } = await pool.report();
    if (events === last) return;
    last = events;
    await sleep(1000);
  }
}

const CLOSE_REASONS = ['client_closed', 'slow_consumer', 'source_error', 'store_error', 'rotation', 'shutdown', 'open_failed', 'access_revoked', 'authorization_unavailable', 'token_expiring'];

/** One scrape of a gateway's metrics, or undefined when its admin server refused (a process at its open-file cap does). */
async function scrapeGateway(gateway: GatewayEntry): Promise<string | undefined> {
  return scrapeMetrics({ adminUrl: gateway.adminUrl! }).catch(() => undefined);
}

function closesIn(scrape: string | undefined): Record<string, number> | undefined {
  if (scrape === undefined) return undefined;
  return Object.fromEntries(CLOSE_REASONS.map((reason) => [reason, metricValue(scrape, 'chat_gateway_streams_closed_total', { kind: 'message', reason })] as const));
}

const DELIVERY_BUCKET = /^chat_gateway_delivery_latency_seconds_bucket\{([^}]*)\}\s+(\S+)/;

/** The gateway's live room-event deliveries by latency bucket, as a scrape found them. */
function deliveriesIn(scrape: string | undefined): DeliveryBuckets | undefined {
  if (scrape === undefined) return undefined;
  const buckets: DeliveryBuckets = [];
  for (const line of scrape.split('\n')) {
    const match = DELIVERY_BUCKET.exec(line);
    if (!match || !match[1]!.includes('kind="message"')) continue;
    const le = /le="([^"]+)"/.exec(match[1]!)?.[1];
    if (le !== undefined) buckets.push({ le: le === '+Inf' ? Infinity : Number(le), count: Number(match[2]) });
  }
  return buckets.sort((a, b) => a.le - b.le);
}

function bucketsSince(after: DeliveryBuckets | undefined, before: DeliveryBuckets | undefined): DeliveryBuckets | undefined {
  if (!after || !before) return undefined;
  return after.map(({ le, count }) => ({ le, count: count - (before.find((b) => b.le === le)?.count ?? 0) }));
}

function subtract(after: Record<string, number> | undefined, before: Record<string, number> | undefined): Record<string, number> | undefined {
  if (!after || !before) return undefined;
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)] as const).filter(([, v]) => v > 0));
}

/** Samples dev-core's call counts every POLL_MS; `stop` returns the most authorization calls in any second. */
function watchCoreCalls(cluster: BenchCluster): { stop(): number } {
  const samples: Array<{ at: number; calls: number }> = [];
  let stopped = false;
  const sample = async () => {
    while (!stopped) {
      const calls = await cluster.core.calls().catch(() => undefined);
      if (calls) samples.push({ at: Date.now(), calls: calls.authorize + calls.authorizeBatch });
      await sleep(POLL_MS);
    }
  };
  void sample();
  return {
    stop() {
      stopped = true;
      let peak = 0;
      for (let a = 0, b = 0; b < samples.length; b++) {
        while (samples[b]!.at - samples[a]!.at > 1000) a++;
        if (b > a) peak = Math.max(peak, ((samples[b]!.calls - samples[a]!.calls) * 1000) / Math.max(1000, samples[b]!.at - samples[a]!.at));
      }
      return peak;
    },
  };
}

/**
 * Reads the gateway's core queue peak (the peak since its previous scrape) every SCRAPE_MS; `stop`
 * returns the highest and the bound, or undefined when a reading failed (its admin server refused).
 */
function watchCoreQueue(gateway: GatewayEntry): { stop(): Promise<{ peak: number; bound: number } | undefined> } {
  let stopped = false;
  let failed = false;
  let peak = 0;
  let bound = 0;
  const scrape = async () => {
    const text = await scrapeGateway(gateway);
    if (text === undefined) {
      failed = true;
      return;
    }
    peak = Math.max(peak, metricValue(text, 'chat_gateway_core_queue_peak'));
    bound = metricValue(text, 'chat_gateway_core_queue_bound');
  };
  const sampling = (async () => {
    while (!stopped) {
      await scrape();
      await sleep(SCRAPE_MS);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await sampling;
      await scrape(); // the peak since the loop's last reading
      return failed ? undefined : { peak, bound };
    },
  };
}

/** Warning and error lines (pino level ≥ 40) of the gateways' whole logs, by message. */
async function countWarnings(files: string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const file of new Set(files)) {
    for (const line of (await readFile(file, 'utf8').catch(() => '')).split('\n')) {
      const level = /"level":(\d+)/.exec(line)?.[1];
      if (!level || Number(level) < 40) continue;
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? '?';
      counts.set(msg, (counts.get(msg) ?? 0) + 1);
    }
  }
  return counts;
}

async function postWarmUp(url: string, token: string): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': ulid() },
    body: JSON.stringify({ bodyMarkdown: 'warm-up' }),
  });
  if (response.status !== 201) throw new Error(`warm-up append answered ${response.status}: ${await response.text()}`);
}

