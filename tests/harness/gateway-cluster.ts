import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { ulid } from 'ulid';
import { deleteRedisKeys } from './redis-keyspace.ts';
import { testRedisEnv } from './test-redis.ts';
import { ApiClient } from './api-client.ts';
import { ChildService } from './child-service.ts';
import { DevCoreClient } from './dev-core-client.ts';
import { startDevCoreProcess, type DevCoreProcess } from './dev-core-process.ts';
import { SharedFixture, type Scenario } from './fixture-factory.ts';
import { freePort } from './free-port.ts';
import { createScratchDatabase } from './scratch-database.ts';
import { Actors } from './stacks.ts';

/** The API built by the composition root with crash points (tests/harness/api-with-crash-faults.ts). */
const API_WITH_CRASH_FAULTS = 'tests/harness/api-with-crash-faults.ts';

/**
 * One service process of the distributed setup (a standalone API or gateway) on fixed ports, so it
 * can be SIGKILLed and started again where clients expect it. Ready when its admin `/readyz` is 200.
 */
export class RestartableService {
  private child: ChildService | undefined;

  constructor(
    readonly name: string,
    private readonly script: string,
    /** Public port (streams or API). */
    readonly port: number,
    readonly adminPort: number,
    private readonly env: Record<string, string>,
  ) {}

  /**
   * Starts the API from the test-only entry point that SIGKILLs itself at `setting` (`commit:N`:
   * after the Nth commit, before its publish; `publish:N`: after that publish, before the response).
   */
  async startCrashingAfter(setting: string): Promise<void> {
    await this.start({ CHAT_TEST_CRASH_AFTER: setting }, API_WITH_CRASH_FAULTS);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get adminUrl(): string {
    return `http://127.0.0.1:${this.adminPort}`;
  }

  /** The running child (undefined before the first start). */
  get process(): ChildService | undefined {
    return this.child;
  }

  get running(): boolean {
    return this.child !== undefined && !this.child.hasExited;
  }

  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  /** Starts the process and waits for readiness; `extraEnv` (and `script`) are for this start only. */
  async start(extraEnv: Record<string, string> = {}, script = this.script): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.child = new ChildService({ name: this.name, script, env: { ...this.env, ...extraEnv } });
    try {
      await this.child.waitUntil(async () => (await fetch(`${this.adminUrl}/readyz`)).status === 200, 120_000);
    } catch (err) {
      await this.child.stop();
      throw err;
    }
  }

  /** SIGKILL: no drain, no lease release, sockets reset. Resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.hasExited) return;
    const exited = once(child.process, 'exit');
    child.process.kill('SIGKILL');
    await exited;
  }

  /** Resolves when the process exits by itself (e.g. a test fault), or rejects after `timeoutMs`. */
  async exited(timeoutMs: number): Promise<void> {
    const child = this.child;
    if (!child || child.hasExited) return;
    await Promise.race([
      once(child.process, 'exit'),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`${this.name} did not exit within ${timeoutMs} ms`)), timeoutMs).unref()),
    ]);
  }

  /** SIGTERM (graceful), SIGKILL after the grace. */
  async stop(graceMs = 5000): Promise<void> {
    await this.child?.stop(graceMs);
  }

  get log(): string {
    return this.child?.log ?? '';
  }
}

export interface GatewayClusterOptions {
  apis: number;
  gateways: number;
  /** Redis for every process. @defaultValue the test Redis */
  redisUrl?: string;
  /** REDIS_* variables for every process (a private Redis Cluster), instead of `redisUrl`. */
  redisEnv?: Record<string, string>;
  /** Environment of every API process. */
  apiEnv?: Record<string, string>;
  /** Environment of every gateway process. */
  gatewayEnv?: Record<string, string>;
  /** The gateways' DATABASE_URL, made from the cluster's (e.g. through a TCP proxy). @defaultValue the cluster's */
  gatewayDatabaseUrl?(databaseUrl: string): string;
}

/**
 * The distributed setup: stand-alone dev-core, `apis` API processes and `gateways` gateway
 * processes on a fresh database of the real PostgreSQL and one Redis, all sharing a fresh
 * REDIS_KEY_PREFIX, so runs never see each other's rows, streams or leases (an outbox relay
 * publishes every stale entry of its database to its own Redis prefix, as a deployment's should).
 */
export interface GatewayCluster {
  core: DevCoreClient;
  /** The cluster's own database. */
  databaseUrl: string;
  fixture: SharedFixture;
  keyPrefix: string;
  apis: RestartableService[];
  gateways: RestartableService[];
  /** One validating client per API process. */
  apiClients: ApiClient[];
  scenario(): Promise<{ scenario: Scenario; actors: Actors }>;
  stop(): Promise<void>;
}

/** Starts dev-core, then every API and gateway at once. */
export async function startGatewayCluster(options: GatewayClusterOptions): Promise<GatewayCluster> {
  const devCore: DevCoreProcess = await startDevCoreProcess();
  const database = await createScratchDatabase('streams');
  const keyPrefix = `e2e-${ulid().toLowerCase()}`;
  const common = {
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    ...(options.redisEnv ?? (options.redisUrl ? { REDIS_URL: options.redisUrl } : await testRedisEnv())),
    REDIS_KEY_PREFIX: keyPrefix,
    CORE_URL: devCore.url,
    // dev-core's public service token on plain http: allowed in development mode only.
    CHAT_DEVELOPMENT_MODE: 'true',
    LOG_LEVEL: 'warn',
  };
  const apis: RestartableService[] = [];
  const gateways: RestartableService[] = [];
  for (let i = 0; i < options.apis; i += 1) {
    const [port, admin] = [await freePort(), await freePort()];
    apis.push(
      new RestartableService(`api-${i}`, 'services/api/src/main.ts', port, admin, {
        ...common,
        PORT: String(port),
        API_ADMIN_PORT: String(admin),
        APPEND_RATE_LIMIT: '1000000',
        ...options.apiEnv,
      }),
    );
  }
  for (let i = 0; i < options.gateways; i += 1) {
    const [port, admin] = [await freePort(), await freePort()];
    gateways.push(
      new RestartableService(`gateway-${i}`, 'services/stream-gateway/src/main.ts', port, admin, {
        ...common,
        PORT: String(port),
        GATEWAY_ADMIN_PORT: String(admin),
        GATEWAY_DRAIN_MS: '500',
        DATABASE_URL: options.gatewayDatabaseUrl?.(database.url) ?? database.url,
        ...options.gatewayEnv,
      }),
    );
  }
  const apiClients = apis.map((a) => new ApiClient(a.url));
  const stop = async () => {
    for (const client of apiClients) client.close();
    await Promise.all([...apis, ...gateways].map((s) => s.stop(2000)));
    await devCore.stop();
    await database.drop().catch(() => undefined);
    // Only the shared Redis: a test's private instance (options.redisUrl) goes away with it.
    if (options.redisUrl === undefined && options.redisEnv === undefined) await deleteRedisKeys(keyPrefix).catch(() => undefined);
  };
  const started = await Promise.allSettled([...apis, ...gateways].map((s) => s.start()));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const core = new DevCoreClient(devCore.url);
  const fixture = new SharedFixture(core);
  return {
    core,
    databaseUrl: database.url,
    fixture,
    keyPrefix,
    apis,
    gateways,
    apiClients,
    async scenario() {
      const scenario = await fixture.scenario();
      return { scenario, actors: new Actors(core, scenario) };
    },
    stop,
  };
}

/** The value of one Prometheus sample on a service's admin `/metrics` (0 when absent). */
export async function readMetric(service: Pick<RestartableService, 'adminUrl'>, name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricValue(await scrapeMetrics(service), name, labels);
}

/** One scrape of a service's `/metrics`, for reading several values with {@link metricValue}. */
export async function scrapeMetrics(service: Pick<RestartableService, 'adminUrl'>): Promise<string> {
  return (await fetch(`${service.adminUrl}/metrics`)).text();
}

/** A sample's value in a scrape's text (the first series of `name` whose labels include `labels`), or 0. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    if (wanted.every((w) => (match[2] ?? '').includes(w))) return Number(match[3]);
  }
  return 0;
}

/** Resident memory of a running process in bytes (from /proc). */
export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb[1]) * 1024;
}
