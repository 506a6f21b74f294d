/**
 * The API alone (distributed deployment): PostgreSQL, Redis and an external core. SIGTERM stops
 * accepting, finishes in-flight requests, stops the outbox relay, then exits.
 */
import { createBackbone } from '@chat/backbone';
import { createLogger, startAdminServer } from '@chat/observability';
import { databaseTargetFor, migrate, openDatabase } from '@chat/store';
import { ApiEnvSchema, parseEnv, type ApiEnv } from './config.ts';
import { crashingAppendFaults } from './domain/append-faults.ts';
import { createRateLimiter } from './rate-limiter.ts';
import { listen } from './http-server.ts';
import { createApiRuntime } from './runtime.ts';

function loadEnv(): ApiEnv & { CORE_URL: string } {
  try {
    const env = parseEnv(ApiEnvSchema, process.env);
    if (!env.CORE_URL) throw new Error('Invalid configuration: CORE_URL is required when the API runs on its own');
    return { ...env, CORE_URL: env.CORE_URL };
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
}
const env = loadEnv();

const logger = createLogger({ name: 'chat-api', level: env.LOG_LEVEL });
const database = await openDatabase(databaseTargetFor({ databaseUrl: env.DATABASE_URL, dataDir: env.DATA_DIR, poolSize: env.DATABASE_POOL_SIZE }));
await migrate(database);
const backbone = createBackbone({ redisUrl: env.REDIS_URL, keyPrefix: env.REDIS_KEY_PREFIX });
const rateLimiter = createRateLimiter(env, logger);
const api = await createApiRuntime({
  database,
  backbone,
  rateLimiter,
  logger,
  core: { url: env.CORE_URL, serviceToken: env.CORE_SERVICE_TOKEN, timeoutMs: env.CORE_TIMEOUT_MS },
  cursor: { secret: env.CURSOR_SECRET, previousSecrets: env.CURSOR_SECRETS_PREVIOUS },
  bodyLimitBytes: env.API_BODY_LIMIT_BYTES,
  ...(env.CHAT_TEST_FAULT_EXIT_AFTER_COMMIT
    ? { faults: crashingAppendFaults(env.CHAT_TEST_FAULT_EXIT_AFTER_COMMIT, () => process.kill(process.pid, 'SIGKILL')) }
    : {}),
});
api.outbox.relay.start();
const http = await listen(api.listener, env.PORT, env.HOST);
let draining = false;
const admin = await startAdminServer({
  port: env.API_ADMIN_PORT,
  registry: api.deps.metrics.registry,
  isDraining: () => draining,
  checks: [
    { name: 'postgres', check: () => database.ping() },
    { name: 'redis', check: () => backbone.ping() },
    { name: 'core', check: () => api.deps.core.ping() },
  ],
});
logger.info({ port: http.port, admin: admin.url }, 'chat api listening');

process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());

async function shutdown(): Promise<void> {
  draining = true;
  logger.info('SIGTERM: draining');
  await http.shutdown(env.API_SHUTDOWN_GRACE_MS);
  await api.outbox.relay.stop();
  await api.outbox.flush();
  await Promise.allSettled([backbone.close(), rateLimiter.close?.(), admin.close()]);
  await database.close();
  logger.info('stopped');
  process.exit(0);
}
