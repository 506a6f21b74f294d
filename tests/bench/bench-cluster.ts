import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ulid } from 'ulid';
import { ChildService } from '../harness/child-service.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { startDevCoreProcess, type DevCoreProcess } from '../harness/dev-core-process.ts';
import { freePort } from '../harness/free-port.ts';
import { testConfig } from '../harness/test-config.ts';
import { createScratchDatabase } from '../harness/scratch-database.ts';
import { deleteRedisKeys } from '../harness/redis-keyspace.ts';
import type { StoreLocation } from './seed-session.ts';

export type BenchMode = 'all-in-one' | 'distributed';

/** The data every scenario uses: one repository with 100 branches, writers and mentioned targets. */
export interface BenchFixture {
  repositoryId: string;
  branchIds: string[];
  /** Branches no other scenario writes to, for the stream scenarios' fresh rooms (see stream-rooms.ts). */
  streamBranchIds: string[];
  writers: string[];
  targets: string[];
  /** Read members that only open streams: the open scenario spreads its tokens over them. */
  openers: string[];
}

export interface BenchCluster {
  mode: BenchMode;
  apiUrls: string[];
  gatewayUrls: string[];
  core: DevCoreClient;
  fixture: BenchFixture;
  /** Services by role, for RSS readings and kills. */
  services: Array<{
    role: 'all-in-one' | 'api' | 'gateway' | 'notifier';
    service: ChildService;
    url?: string;
    adminUrl?: string;
    diagnosticDir?: string;
    /** Distributed mode: starts the process again on its ports once it has exited (a scenario killed it), and waits until it is ready. */
    restart?: () => Promise<void>;
  }>;
  /** dev-core's process in the distributed mode (the all-in-one embeds it). */
  devCorePid?: number;
  /** The deployment's own PostgreSQL database in the distributed mode. */
  databaseUrl?: string;
  /** REDIS_KEY_PREFIX of every service in the distributed mode. */
  keyPrefix?: string;
  /**
   * Runs `seed` on the deployment's store, for data too large to append through the API. PostgreSQL
   * is seeded by URL while the services run. The all-in-one's embedded database belongs to its
   * process (a second opener of the folder is refused), so the process is stopped for the seed and
   * started again on the same `DATA_DIR` and ports: dev-core's signing keys are kept in the folder,
   * so the tokens minted before stay valid, and its fixture as it stood (apps and installations
   * included) is loaded again from a file. Streams open at the time are cut.
   */
  seedStore<T>(seed: (store: StoreLocation) => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

const BENCH_ENV = {
  LOG_LEVEL: 'warn',
  PRINT_DEMO_TOKENS: 'false',
  // Benchmarks measure throughput, not the abuse limits.
  APPEND_RATE_LIMIT: '1000000000',
  STREAM_CAP_PER_PRINCIPAL: '100000',
  STREAM_CAP_PER_ROOM: '100000',
  // The open scenarios open thousands of streams per gateway at once, past the per-process open rate.
  GATEWAY_STREAM_OPENS_PER_SECOND: '1000000',
  GATEWAY_STREAM_OPEN_BURST: '1000000',
  CORE_SERVICE_TOKEN: 'dev-core-service-token',
  // Heartbeats and core rechecks are per-stream background work, not what the stream figures
  // measure; at the defaults 18,000 idle streams would make 1,200 heartbeats/s and 300 core calls/s.
  GATEWAY_HEARTBEAT_MS: '600000',
  GATEWAY_RECHECK_MS: '600000',
  // The webhook bench holds its receiver's answers while it builds a backlog of mentions: the lanes'
  // first POSTs wait that long (at most) before counting as failed.
  WEBHOOK_TIMEOUT_MS: '60000',
};

export function benchFixture(): { fixture: BenchFixture; document: unknown } {
  const repositoryId = ulid();
  const branchIds = Array.from({ length: 100 }, () => ulid());
  const streamBranchIds = Array.from({ length: 1300 }, () => ulid());
  const writers = Array.from({ length: 8 }, (_, i) => `u_bench_writer_${i}`);
  const targets = Array.from({ length: 10 }, (_, i) => `u_bench_target_${i}`);
  const openers = Array.from({ length: 100 }, (_, i) => `u_bench_opener_${i}`);
  const fixture = { repositoryId, branchIds, streamBranchIds, writers, targets, openers };
  return { fixture, document: fixtureDocument(fixture) };
}

/** dev-core's fixture document for `fixture`, plus `moreRepositories` (IDs and branches) the same members may use. */
export function fixtureDocument(fixture: BenchFixture, moreRepositories: Array<{ id: string; branchIds: string[] }> = []): unknown {
  const { writers, targets, openers } = fixture;
  const members = Object.fromEntries([...writers.map((w) => [w, 'write']), ...[...targets, ...openers].map((t) => [t, 'read'])]);
  const repositories = [{ id: fixture.repositoryId, branchIds: [...fixture.branchIds, ...fixture.streamBranchIds] }, ...moreRepositories];
  return {
    users: [...writers, ...targets, ...openers].map((id) => ({ id })),
    organizations: [{ id: 'o_bench' }],
    repositories: repositories.map(({ id, branchIds }) => ({ id, state: 'active', branches: branchIds.map((b) => ({ id: b, state: 'active' })), members })),
    bots: [],
  };
}

/**
 * Starts what a benchmark measures: one all-in-one process (embedded database and backbone), or the
 * distributed shape on PostgreSQL and Redis with `apis` API processes, `gateways` gateway processes and
 * `notifiers` notifier processes (default 1), on a fresh database and Redis key prefix (a notifier sweeps
 * every fan-out row of its database, so it must not share one with other runs). `gatewayEnv` is added
 * to the gateways' environment (over the bench's own settings). `redisEnv` points
 * the services at a Redis of the caller's (a private Redis Cluster: `RedisCluster.env()`) instead of
 * the test Redis; the caller removes it.
 */
export async function startBenchCluster(
  mode: BenchMode,
  shape: { apis: number; gateways: number; notifiers?: number; redisEnv?: Record<string, string>; gatewayEnv?: Record<string, string> } = { apis: 2, gateways: 2 },
): Promise<BenchCluster> {
  const { fixture, document } = benchFixture();
  const services: BenchCluster['services'] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    await Promise.allSettled(services.map((s) => s.service.stop(15_000)));
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    if (mode === 'all-in-one') {
      const folder = await mkdtemp(join(tmpdir(), 'chat-bench-'));
      cleanups.push(() => rm(folder, { recursive: true, force: true }));
      const dataDir = join(folder, 'data');
      // dev-core keeps its fixture in memory: from a file, it is there again after a restart.
      const fixtureFile = join(folder, 'dev-core-fixture.json');
      await writeFile(fixtureFile, JSON.stringify(document));
      const port = await freePort();
      const env = { ...BENCH_ENV, PORT: String(port), HOST: '127.0.0.1', DEV_CORE_PORT: String(await freePort()), DEV_CORE_FIXTURE: fixtureFile, DATA_DIR: dataDir };
      const url = `http://127.0.0.1:${port}`;
      const entry: BenchCluster['services'][number] = { role: 'all-in-one', service: new ChildService({ name: 'all-in-one', script: 'services/all-in-one/src/main.ts', env }), url };
      services.push(entry);
      const ready = () => entry.service.waitUntil(async () => (await fetch(`${url}/v1/openapi.json`)).status === 200, 120_000);
      await ready();
      const core = new DevCoreClient((await entry.service.waitForOutput(/^core:\s+(\S+)$/m, 10_000))[1]!);
      const seedStore = async <T>(seed: (store: StoreLocation) => Promise<T>): Promise<T> => {
        await writeFile(fixtureFile, JSON.stringify(await core.getFixture()));
        await entry.service.stop(15_000);
        try {
          return await seed({ kind: 'pglite', dataDir });
        } finally {
          entry.service = new ChildService({ name: 'all-in-one', script: 'services/all-in-one/src/main.ts', env });
          await ready();
        }
      };
      return { mode, apiUrls: [url], gatewayUrls: [url], core, fixture, services, seedStore, stop };
    }

    const devCore: DevCoreProcess = await startDevCoreProcess();
    cleanups.push(() => devCore.stop());
    const core = new DevCoreClient(devCore.url);
    await core.putFixture(document);
    const database = await createScratchDatabase('bench');
    cleanups.push(() => database.drop());
    const keyPrefix = `bench-${ulid().toLowerCase()}`;
    if (!shape.redisEnv) cleanups.push(async () => void (await deleteRedisKeys(keyPrefix)));
    const redis = shape.redisEnv ?? { REDIS_URL: testConfig.redisUrl };
    const shared = { ...BENCH_ENV, DATABASE_URL: database.url, ...redis, REDIS_KEY_PREFIX: keyPrefix, CORE_URL: devCore.url, CHAT_DEVELOPMENT_MODE: 'true', HOST: '127.0.0.1' };
    const start = async (role: 'api' | 'gateway' | 'notifier', script: string, extra: Record<string, string> = {}) => {
      const port = await freePort();
      const adminPort = await freePort();
      // A gateway writes a heap snapshot on SIGUSR2 (which first collects all garbage): the leak
      // check uses it to read the heap without garbage in it.
      const diagnosticDir = role === 'gateway' ? await mkdtemp(join(tmpdir(), 'chat-bench-diag-')) : undefined;
      if (diagnosticDir) cleanups.push(() => rm(diagnosticDir, { recursive: true, force: true }));
      const diagnostics: Record<string, string> = diagnosticDir ? { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${diagnosticDir}` } : {};
      const launch = () =>
        new ChildService({
          name: role,
          script,
          env: { ...shared, PORT: String(port), API_ADMIN_PORT: String(adminPort), GATEWAY_ADMIN_PORT: String(adminPort), NOTIFIER_ADMIN_PORT: String(adminPort), ...diagnostics, ...extra },
        });
      const ready = (service: ChildService) => service.waitUntil(async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200, 120_000);
      const url = `http://127.0.0.1:${port}`;
      const entry: BenchCluster['services'][number] = { role, service: launch(), url, adminUrl: `http://127.0.0.1:${adminPort}`, ...(diagnosticDir ? { diagnosticDir } : {}) };
      entry.restart = async () => {
        if (!entry.service.hasExited) throw new Error(`${role} on port ${port} is still running`);
        entry.service = launch();
        await ready(entry.service);
      };
      services.push(entry);
      await ready(entry.service);
      return url;
    };
    const apiUrls = await Promise.all(Array.from({ length: shape.apis }, () => start('api', 'services/api/src/main.ts')));
    const gatewayUrls = await Promise.all(Array.from({ length: shape.gateways }, () => start('gateway', 'services/stream-gateway/src/main.ts', shape.gatewayEnv)));
    await Promise.all(Array.from({ length: shape.notifiers ?? 1 }, () => start('notifier', 'services/notifier/src/main.ts')));
    const seedStore = <T>(seed: (store: StoreLocation) => Promise<T>): Promise<T> => seed({ kind: 'postgres', url: database.url });
    return { mode, apiUrls, gatewayUrls, core, fixture, services, seedStore, stop, databaseUrl: database.url, keyPrefix, ...(devCore.service.pid ? { devCorePid: devCore.service.pid } : {}) };
  } catch (err) {
    await stop();
    throw err;
  }
}
