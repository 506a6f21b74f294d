import { createApiRuntime, createRateLimiter, listen } from '@chat/api';
import { createBackbone } from '@chat/backbone';
import { createStreamLeaseRegistry } from '@chat/coordination';
import { createGatewayRuntime, engineSettingsOf, streamCapsOf } from '@chat/stream-gateway';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { createCoreClient } from '@chat/authz-client';
import { createNotifierRuntime } from '@chat/notifier';
import { createLogger } from '@chat/observability';
import { databaseTargetFor, migrate, openDatabase } from '@chat/store';
import type { AllInOneConfig } from './config.ts';
import { demoBanner } from './demo-banner.ts';

export interface RunningAllInOne {
  url: string;
  coreUrl: string;
  banner: string;
  stop(): Promise<void>;
}

/** Starts every part in this process and answers once the public port is listening. */
export async function startAllInOne(config: AllInOneConfig): Promise<RunningAllInOne> {
  const logger = createLogger({ name: 'chat', level: config.LOG_LEVEL });
  const database = await openDatabase(databaseTargetFor({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolSize: config.DATABASE_POOL_SIZE }));
  await migrate(database);
  const backbone = createBackbone({ redisUrl: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX });
  const leases = createStreamLeaseRegistry({
    ...streamCapsOf(config),
    redisUrl: config.REDIS_URL,
    keyPrefix: config.REDIS_KEY_PREFIX,
    onError: (err) => logger.warn({ err }, 'stream lease trouble'),
  });

  let devCore: DevCoreHandle | undefined;
  if (!config.CORE_URL) {
    devCore = await startDevCore({
      port: config.DEV_CORE_PORT,
      serviceToken: config.CORE_SERVICE_TOKEN,
      logger: logger.child({ component: 'dev-core' }),
      ...(config.DEV_CORE_FIXTURE ? { fixturePath: config.DEV_CORE_FIXTURE } : {}),
    });
  }
  const coreUrl = config.CORE_URL ?? devCore!.url;

  const core = { url: coreUrl, serviceToken: config.CORE_SERVICE_TOKEN, timeoutMs: config.CORE_TIMEOUT_MS };
  const cursor = { secret: config.CURSOR_SECRET, previousSecrets: config.CURSOR_SECRETS_PREVIOUS };
  const gateway = await createGatewayRuntime({
    database,
    backbone,
    leases,
    logger: logger.child({ component: 'stream-gateway' }),
    core,
    cursor,
    engine: engineSettingsOf(config),
  });
  const rateLimiter = createRateLimiter(config, logger);
  const api = await createApiRuntime({
    database,
    backbone,
    rateLimiter,
    logger,
    core,
    cursor,
    bodyLimitBytes: config.API_BODY_LIMIT_BYTES,
    // Streams are served on the API's port.
    extraRouters: [gateway.router],
  });
  api.outbox.relay.start();
  const notifier = createNotifierRuntime({
    database,
    backbone,
    logger: logger.child({ component: 'notifier' }),
    core: createCoreClient({ coreUrl, serviceToken: config.CORE_SERVICE_TOKEN, timeoutMs: config.CORE_TIMEOUT_MS }),
  });
  await notifier.start();

  // Stream GETs and plain appends are served on Node's own request and response; the rest by express.
  const http = await listen(gateway.listenerFor(api.listener), config.PORT, config.HOST);
  const url = `http://127.0.0.1:${http.port}`;
  logger.info({ url, coreUrl, database: database.kind, backbone: config.REDIS_URL ? 'redis' : 'in-process' }, 'chat listening');

  const banner = await demoBanner({ url, coreUrl, devCore: config.PRINT_DEMO_TOKENS ? devCore : undefined });
  return {
    url,
    coreUrl,
    banner,
    async stop() {
      const closing = http.shutdown(config.API_SHUTDOWN_GRACE_MS);
      await gateway.drain(config.GATEWAY_DRAIN_MS);
      await gateway.close();
      await closing;
      await leases.close();
      await api.outbox.relay.stop();
      await api.outbox.flush();
      await notifier.stop();
      await rateLimiter.close?.();
      await backbone.close();
      await database.close();
      await devCore?.close();
    },
  };
}
