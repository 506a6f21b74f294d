/**
 * The standalone notifier: PostgreSQL + Redis Streams + core. SIGTERM (or SIGINT) stops taking work,
 * settles the work in hand, and exits.
 */
import { createLogger, startAdminServer } from '@chat/observability';
import { openProcessResources } from '@chat/process-resources';
import { loadConfigOrExit } from '@chat/service-config';
import { startTracing } from '@chat/tracing';
import { loadNotifierConfig } from './config.ts';
import { createNotifierRuntime } from './runtime.ts';
import { bullmqWebhookQueue } from './webhook-queue.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit(() => loadNotifierConfig(process.env));
  const logger = createLogger({ name: 'notifier', level: config.log.level });
  const tracing = await startTracing(config.tracing, logger);
  const resources = await openProcessResources(
    {
      database: { ...config.database, dataDir: './data' },
      redis: config.redis,
      core: config.core,
      // The notifier makes no cursors; the codec is loaded all the same, from the database's key.
      cursor: { secret: undefined, previousSecrets: [] },
    },
    logger,
  );
  const runtime = createNotifierRuntime({ resources, logger, settings: config.notifier, webhookQueue: bullmqWebhookQueue(config.redis) });
  let draining = false;
  const admin = await startAdminServer({
    port: config.admin.port,
    host: config.admin.host,
    registry: runtime.metrics.registry,
    checks: resources.readinessChecks().filter((c) => c.name !== 'core'),
    isDraining: () => draining,
    logger,
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
      await resources.close();
      await tracing.shutdown();
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
  // Before the logger exists stderr is the only place to say why.
  process.stderr.write(`notifier failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
