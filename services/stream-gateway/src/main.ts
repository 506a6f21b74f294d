/**
 * The standalone stream gateway: `pnpm --filter @chat/stream-gateway start`. SIGTERM/SIGINT hand
 * every stream off over GATEWAY_DRAIN_MS, then the process exits.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createBackbone } from '@chat/backbone';
import { createStreamLeaseRegistry } from '@chat/coordination';
import { createLogger, startAdminServer } from '@chat/observability';
import { databaseTargetFor, migrate, openDatabase } from '@chat/store';
import { engineSettingsOf, loadGatewayConfig, streamCapsOf } from './config.ts';
import { createGatewayRuntime } from './runtime.ts';

const config = loadGatewayConfig(process.env);
const logger = createLogger({ name: 'stream-gateway', level: config.LOG_LEVEL });
const database = await openDatabase(databaseTargetFor({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: config.DATABASE_POOL_SIZE }));
await migrate(database);
const backbone = createBackbone({ redisUrl: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX });
const leases = createStreamLeaseRegistry({
  ...streamCapsOf(config),
  redisUrl: config.REDIS_URL,
  keyPrefix: config.REDIS_KEY_PREFIX,
  onError: (err) => logger.warn({ err }, 'stream lease trouble'),
});

const gateway = await createGatewayRuntime({
  database,
  backbone,
  leases,
  logger,
  core: { url: config.CORE_URL, serviceToken: config.CORE_SERVICE_TOKEN, timeoutMs: config.CORE_TIMEOUT_MS },
  cursor: { secret: config.CURSOR_SECRET, previousSecrets: config.CURSOR_SECRETS_PREVIOUS },
  engine: engineSettingsOf(config),
});
const server = createServer(gateway.listener).listen(config.PORT, config.HOST);
await once(server, 'listening');
let draining = false;
const admin = await startAdminServer({
  port: config.GATEWAY_ADMIN_PORT,
  registry: gateway.metrics.registry,
  isDraining: () => draining,
  checks: [
    { name: 'postgres', check: () => database.ping() },
    { name: 'redis', check: () => backbone.ping() },
    { name: 'core', check: () => gateway.deps.core.ping() },
  ],
});
logger.info({ port: config.PORT, admin: admin.url, database: database.kind, backbone: config.REDIS_URL ? 'redis' : 'in-process' }, 'stream gateway listening');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  draining = true;
  logger.info({ signal, drainMs: config.GATEWAY_DRAIN_MS }, 'draining streams');
  server.close();
  await gateway.drain(config.GATEWAY_DRAIN_MS);
  await gateway.close();
  await leases.close();
  await backbone.close();
  await database.close();
  await admin.close();
  logger.info('stream gateway stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
