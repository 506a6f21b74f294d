/**
 * The standalone notifier: PostgreSQL + Redis Streams + core. SIGTERM (or SIGINT) stops taking work,
 * settles the work in hand, and exits.
 */
import { createCoreClient } from '@chat/authz-client';
import { RedisStreamsBackbone } from '@chat/backbone';
import { createLogger, startAdminServer } from '@chat/observability';
import { migrate, openDatabase } from '@chat/store';
import { loadNotifierConfig } from './config.ts';
import { createNotifierRuntime } from './runtime.ts';

async function main(): Promise<void> {
  const config = loadNotifierConfig(process.env);
  const logger = createLogger({ name: 'notifier', level: config.LOG_LEVEL });
  const database = await openDatabase({ kind: 'postgres', url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE });
  await migrate(database);
  const backbone = new RedisStreamsBackbone({
    redis: config.REDIS_URL,
    keyPrefix: config.REDIS_KEY_PREFIX,
    onBackgroundError: (err) => logger.warn({ err }, 'backbone background error'),
  });
  const runtime = createNotifierRuntime({
    database,
    backbone,
    core: createCoreClient({ coreUrl: config.CORE_URL, serviceToken: config.CORE_SERVICE_TOKEN, timeoutMs: config.CORE_TIMEOUT_MS }),
    logger,
    settings: {
      consumer: {
        group: config.NOTIFIER_GROUP,
        batchSize: config.NOTIFIER_BATCH_SIZE,
        concurrency: config.NOTIFIER_CONCURRENCY,
        claimIdleMs: config.NOTIFIER_CLAIM_IDLE_MS,
        maxDeliveries: config.NOTIFIER_MAX_DELIVERIES,
        ...(config.NOTIFIER_CONSUMER_NAME ? { consumer: config.NOTIFIER_CONSUMER_NAME } : {}),
      },
      sweeper: {
        intervalMs: config.NOTIFIER_SWEEP_INTERVAL_MS,
        graceMs: config.NOTIFIER_SWEEP_GRACE_MS,
        batchSize: config.NOTIFIER_SWEEP_BATCH_SIZE,
        concurrency: config.NOTIFIER_CONCURRENCY,
      },
      processor: { leaseMs: config.NOTIFIER_LEASE_MS, maxAttempts: config.NOTIFIER_MAX_ATTEMPTS, retryDelayMs: config.NOTIFIER_RETRY_DELAY_MS },
    },
  });
  let draining = false;
  const admin = await startAdminServer({
    port: config.NOTIFIER_ADMIN_PORT,
    registry: runtime.metrics.registry,
    checks: [
      { name: 'database', check: () => database.ping() },
      { name: 'backbone', check: () => backbone.ping() },
    ],
    isDraining: () => draining,
  });
  await runtime.start();
  logger.info({ admin: admin.url }, 'notifier ready');

  const shutdown = async (signal: string) => {
    if (draining) return;
    draining = true;
    logger.info({ signal }, 'notifier draining');
    try {
      await runtime.stop();
      await admin.close();
      await backbone.close();
      await database.close();
      process.exit(0);
    } catch (err) {
      // Unsettled rows are not lost: their leases lapse and another notifier takes them.
      logger.error({ err }, 'notifier did not stop cleanly');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  // Before the logger exists (bad configuration) stderr is the only place to say why.
  process.stderr.write(`notifier failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
