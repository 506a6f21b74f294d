/**
 * The distributed deployment for the SIGTERM tests: a stand-alone dev-core and separate API, stream
 * gateway and notifier processes on the real PostgreSQL and Redis, all sharing one random
 * REDIS_KEY_PREFIX so runs never see each other's backbone traffic.
 */
import { once } from 'node:events';
import { ulid } from 'ulid';
import { ChildService } from '../harness/child-service.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { startDevCoreProcess, type DevCoreProcess } from '../harness/dev-core-process.ts';
import { SharedFixture } from '../harness/fixture-factory.ts';
import { freePort } from '../harness/free-port.ts';
import { createScratchDatabase } from '../harness/scratch-database.ts';
import { deleteRedisKeys } from '../harness/redis-keyspace.ts';
import { testConfig } from '../harness/test-config.ts';

/** One started service process and the URLs it answers on. */
export interface ServiceProcess {
  name: string;
  /** Public HTTP URL (API and gateway; the notifier has none). */
  url: string;
  /** Admin server URL (/healthz, /readyz, /metrics). */
  adminUrl: string;
  service: ChildService;
}

/** How a process ended after SIGTERM. */
export interface Termination {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** From the signal to the exit. */
  elapsedMs: number;
}

/** dev-core plus the shared settings every service of one test run gets. */
export interface LifecycleWorld {
  core: DevCoreClient;
  fixture: SharedFixture;
  prefix: string;
  /** DATABASE_URL, REDIS_URL, CORE_URL and REDIS_KEY_PREFIX for the services. */
  env: Record<string, string>;
  startApi(name: string, env?: Record<string, string>): Promise<ServiceProcess>;
  startGateway(name: string, env?: Record<string, string>): Promise<ServiceProcess>;
  startNotifier(name: string, env?: Record<string, string>): Promise<ServiceProcess>;
  /** Stops everything still running (SIGTERM, then SIGKILL). */
  stop(): Promise<void>;
}

/** Starts dev-core alone and returns a world that starts services against it. */
export async function startLifecycleWorld(): Promise<LifecycleWorld> {
  const devCore: DevCoreProcess = await startDevCoreProcess();
  const core = new DevCoreClient(devCore.url);
  const prefix = `lifecycle-${ulid()}`;
  const database = await createScratchDatabase('lifecycle');
  // dev-core's public service token on plain http: allowed in development mode only.
  const env = { DATABASE_URL: database.url, REDIS_URL: testConfig.redisUrl, CORE_URL: devCore.url, REDIS_KEY_PREFIX: prefix, CHAT_DEVELOPMENT_MODE: 'true', LOG_LEVEL: 'info' };
  const started: ServiceProcess[] = [];

  async function start(name: string, script: string, portEnv: string | undefined, adminEnv: string, extra: Record<string, string>, ready: (p: ServiceProcess) => Promise<void>) {
    const port = await freePort();
    const adminPort = await freePort();
    const service = new ChildService({
      name,
      script,
      env: { ...env, HOST: '127.0.0.1', ...(portEnv ? { [portEnv]: String(port) } : {}), [adminEnv]: String(adminPort), ...extra },
    });
    const proc: ServiceProcess = { name, url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}`, service };
    started.push(proc);
    await ready(proc);
    return proc;
  }
  const readyz = (p: ServiceProcess) => p.service.waitUntil(async () => (await fetch(`${p.adminUrl}/readyz`)).status === 200);

  return {
    core,
    fixture: new SharedFixture(core),
    prefix,
    env,
    startApi: (name, extra = {}) =>
      start(name, 'services/api/src/main.ts', 'PORT', 'API_ADMIN_PORT', { APPEND_RATE_LIMIT: '1000000', ...extra }, async (p) => {
        await p.service.waitUntil(async () => (await fetch(`${p.url}/v1/openapi.json`)).status === 200);
        await readyz(p);
      }),
    startGateway: (name, extra = {}) => start(name, 'services/stream-gateway/src/main.ts', 'PORT', 'GATEWAY_ADMIN_PORT', extra, readyz),
    startNotifier: (name, extra = {}) =>
      start(name, 'services/notifier/src/main.ts', undefined, 'NOTIFIER_ADMIN_PORT', extra, async (p) => {
        await p.service.waitForOutput(/notifier ready/);
      }),
    async stop() {
      await Promise.all(started.map((p) => p.service.stop()));
      await devCore.stop();
      await database.drop();
      await deleteRedisKeys(prefix).catch(() => undefined);
    },
  };
}

/** Sends SIGTERM and resolves once the process has exited (SIGKILL after `killAfterMs`, so a hang fails instead of blocking). */
export async function terminate(target: ServiceProcess, killAfterMs = 30_000): Promise<Termination> {
  const child = target.service.process;
  if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${target.name} exited before SIGTERM:\n${target.service.log}`);
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const sentAt = Date.now();
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const [code, signal] = await exited;
  clearTimeout(killer);
  return { code, signal, elapsedMs: Date.now() - sentAt };
}

/** Polls `probe` until it returns true, failing with `what` after `timeoutMs`. */
export async function eventually(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 30_000, intervalMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
