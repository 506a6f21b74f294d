import { ulid } from 'ulid';
import { ChildService } from '../harness/child-service.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { startDevCoreProcess, type DevCoreProcess } from '../harness/dev-core-process.ts';
import { freePort } from '../harness/free-port.ts';
import { createScratchDatabase } from '../harness/scratch-database.ts';
import { deleteRedisKeys } from '../harness/redis-keyspace.ts';
import { testRedisEnv } from '../harness/test-redis.ts';

export type Role = 'api' | 'gateway' | 'notifier';

const SCRIPTS: Record<Role, string> = {
  api: 'services/api/src/main.ts',
  gateway: 'services/stream-gateway/src/main.ts',
  notifier: 'services/notifier/src/main.ts',
};

const ADMIN_PORT_VARIABLE: Record<Role, string> = { api: 'API_ADMIN_PORT', gateway: 'GATEWAY_ADMIN_PORT', notifier: 'NOTIFIER_ADMIN_PORT' };

export interface ServiceHandle {
  role: Role;
  service: ChildService;
  /** Public base URL (api and gateway). */
  url: string;
  /** Admin server base URL (/healthz, /readyz, /metrics). */
  adminUrl: string;
}

/** The distributed shape: each service its own process, on one PostgreSQL, one Redis and dev-core. */
export interface DistributedCluster {
  core: DevCoreClient;
  /** The fresh database of this run. */
  databaseUrl: string;
  /** The random REDIS_KEY_PREFIX of this run. */
  keyPrefix: string;
  apis: ServiceHandle[];
  gateways: ServiceHandle[];
  notifiers: ServiceHandle[];
  stop(): Promise<void>;
}

export interface ClusterShape {
  apis: number;
  gateways: number;
  notifiers: number;
  /** Extra environment per role. */
  env?: Partial<Record<Role, Record<string, string>>>;
}

/**
 * Starts dev-core, then the API, gateway and notifier processes (`node --import tsx <main>`), each
 * ready once its admin server's `/readyz` answers 200. The database and the Redis key prefix are
 * fresh per run, so rows, consumer groups and streams of other runs are never met.
 */
export async function startDistributedCluster(shape: ClusterShape): Promise<DistributedCluster> {
  const database = await createScratchDatabase('e2e');
  const devCore: DevCoreProcess = await startDevCoreProcess().catch(async (err: unknown) => {
    await database.drop();
    throw err;
  });
  const keyPrefix = `e2e-${ulid().toLowerCase()}`;
  const handles: ServiceHandle[] = [];
  const stop = async () => {
    await Promise.allSettled(handles.map((h) => h.service.stop()));
    await devCore.stop();
    await database.drop();
    await deleteRedisKeys(keyPrefix).catch(() => undefined);
  };
  const shared = {
    DATABASE_URL: database.url,
    ...(await testRedisEnv()),
    CORE_URL: devCore.url,
    CHAT_DEVELOPMENT_MODE: 'true',
    REDIS_KEY_PREFIX: keyPrefix,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  const start = async (role: Role, index: number): Promise<ServiceHandle> => {
    const port = await freePort();
    const adminPort = await freePort();
    const service = new ChildService({
      name: `${role}-${index}`,
      script: SCRIPTS[role],
      env: { ...shared, PORT: String(port), [ADMIN_PORT_VARIABLE[role]]: String(adminPort), ...shape.env?.[role] },
    });
    const handle = { role, service, url: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}` };
    handles.push(handle);
    await service.waitUntil(async () => (await fetch(`${handle.adminUrl}/readyz`)).status === 200, 120_000);
    return handle;
  };
  try {
    const many = (role: Role, count: number) => Promise.all(Array.from({ length: count }, (_, i) => start(role, i)));
    const [apis, gateways, notifiers] = await Promise.all([many('api', shape.apis), many('gateway', shape.gateways), many('notifier', shape.notifiers)]);
    return { core: new DevCoreClient(devCore.url), databaseUrl: database.url, keyPrefix, apis, gateways, notifiers, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
