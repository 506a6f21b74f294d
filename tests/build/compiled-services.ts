/**
 * Every process of the production build, started as the image starts it: plain `node dist/<entry>.js`
 * in the package's folder (no tsx, no source condition), on free ports, each timed from spawn to its
 * first successful readiness probe. The image-contents test starts them from the deploy output, the
 * startup benchmark from the built workspace.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ulid } from 'ulid';
import { ChildService } from '../harness/child-service.ts';
import { freePort } from '../harness/free-port.ts';
import { createScratchDatabase, type ScratchDatabase } from '../harness/scratch-database.ts';
import { deleteRedisKeys } from '../harness/redis-keyspace.ts';
import { testConfig } from '../harness/test-config.ts';

/** One process of the build: which package, which compiled entry, and how it shows it is ready. */
export interface CompiledService {
  name: string;
  packageName: string;
  /** Its package folder in the repository. */
  packageDir: string;
  entry: string;
  /** `readyz`: the admin server's /readyz (port in `adminPortEnv`); the others: a public URL. */
  readiness: { adminPortEnv: string } | { publicPath: string };
  /** Needs the shared dependencies (PostgreSQL, Redis, a dev-core); otherwise it embeds them. */
  distributed: boolean;
}

export const COMPILED_SERVICES: readonly CompiledService[] = [
  { name: 'dev-core', packageName: '@chat/dev-core', packageDir: 'services/dev-core', entry: 'dist/main.js', readiness: { publicPath: '/healthz' }, distributed: false },
  { name: 'api', packageName: '@chat/api', packageDir: 'services/api', entry: 'dist/main.js', readiness: { adminPortEnv: 'API_ADMIN_PORT' }, distributed: true },
  { name: 'stream-gateway', packageName: '@chat/stream-gateway', packageDir: 'services/stream-gateway', entry: 'dist/main.js', readiness: { adminPortEnv: 'GATEWAY_ADMIN_PORT' }, distributed: true },
  { name: 'notifier', packageName: '@chat/notifier', packageDir: 'services/notifier', entry: 'dist/main.js', readiness: { adminPortEnv: 'NOTIFIER_ADMIN_PORT' }, distributed: true },
  {
    name: 'ingress-errors',
    packageName: '@chat/ingress-errors',
    packageDir: 'services/ingress-errors',
    entry: 'dist/main.js',
    readiness: { adminPortEnv: 'INGRESS_ERRORS_ADMIN_PORT' },
    distributed: false,
  },
  { name: 'viewer', packageName: '@chat/viewer', packageDir: 'services/viewer', entry: 'dist/main.js', readiness: { adminPortEnv: 'VIEWER_ADMIN_PORT' }, distributed: false },
  { name: 'all-in-one', packageName: '@chat/all-in-one', packageDir: 'services/all-in-one', entry: 'dist/main.js', readiness: { publicPath: '/v1/openapi.json' }, distributed: false },
];

/** The migration CLI: runs to completion. */
export const COMPILED_MIGRATION = { packageName: '@chat/store', packageDir: 'libraries/store', entry: 'dist/migrate-cli.js' } as const;

/** A started process and how long it took from spawn to its first successful readiness probe. */
export interface StartedService {
  service: ChildService;
  url: string;
  readyMs: number;
}

/**
 * What the distributed services share: a scratch database, a Redis key prefix and a dev-core URL.
 * `coreUrl` is filled in once a dev-core runs (the caller starts one from the same build).
 */
export interface SharedDependencies {
  env: Record<string, string>;
  database: ScratchDatabase;
  release(): Promise<void>;
}

/** `label`: a name part of the scratch database (letters, digits and underscores). */
export async function sharedDependencies(label: string): Promise<SharedDependencies> {
  const database = await createScratchDatabase(label);
  const prefix = `${label}-${ulid()}`;
  return {
    database,
    env: { DATABASE_URL: database.url, REDIS_URL: testConfig.redisUrl, REDIS_KEY_PREFIX: prefix, CHAT_DEVELOPMENT_MODE: 'true', LOG_LEVEL: 'warn' },
    async release() {
      await database.drop();
      await deleteRedisKeys(prefix).catch(() => undefined);
    },
  };
}

export interface StartOptions {
  /** Give up (and stop the process) after this long. @defaultValue 300000 (a busy 2-core machine) */
  timeoutMs?: number;
  /** The all-in-one's DATA_DIR, kept; by default a fresh folder, removed when the process exits. */
  dataDir?: string;
}

/**
 * Starts `spec` with `node <entry>` in `cwd` and polls its readiness every 10 ms. `env` carries the
 * shared settings (DATABASE_URL, CORE_URL, ...) for the distributed services.
 */
export async function startCompiled(spec: CompiledService, cwd: string, env: Record<string, string>, options: StartOptions = {}): Promise<StartedService> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  const port = await freePort();
  const ports: Record<string, string> = { HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' };
  let probeUrl: string;
  let scratch: string | undefined;
  if ('adminPortEnv' in spec.readiness) {
    const adminPort = await freePort();
    ports[spec.readiness.adminPortEnv] = String(adminPort);
    probeUrl = `http://127.0.0.1:${adminPort}/readyz`;
  } else {
    probeUrl = `http://127.0.0.1:${port}${spec.readiness.publicPath}`;
  }
  if (spec.name === 'dev-core') Object.assign(ports, { DEV_CORE_PORT: String(port), DEV_CORE_LOG_LEVEL: 'warn' });
  // The viewer only names its own origin and core's in the page config; it never calls either.
  if (spec.name === 'viewer') Object.assign(ports, { VIEWER_PUBLIC_URL: `http://127.0.0.1:${port}`, VIEWER_CORE_URL: env.CORE_URL ?? 'http://127.0.0.1:1' });
  if (spec.name === 'all-in-one') {
    if (!options.dataDir) scratch = await mkdtemp(join(tmpdir(), 'chat-compiled-'));
    Object.assign(ports, { DEV_CORE_PORT: String(await freePort()), DATA_DIR: options.dataDir ?? scratch!, PRINT_DEMO_TOKENS: 'false' });
  }
  const startedAt = performance.now();
  const service = new ChildService({ name: `compiled-${spec.name}`, script: spec.entry, env: { ...(spec.distributed ? env : {}), ...ports }, compiled: { cwd } });
  const removeScratch = () => (scratch ? rm(scratch, { recursive: true, force: true }) : Promise.resolve());
  try {
    await service.waitUntil(async () => (await fetch(probeUrl, { signal: AbortSignal.timeout(2_000) })).status === 200, timeoutMs, 10);
  } catch (err) {
    await service.stop();
    await removeScratch();
    throw err;
  }
  service.process.once('exit', () => void removeScratch());
  return { service, url: `http://127.0.0.1:${port}`, readyMs: performance.now() - startedAt };
}
