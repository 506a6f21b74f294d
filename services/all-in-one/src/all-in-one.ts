import { createApiRuntime, listen } from '@chat/api';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { createRoutePipeline } from '@chat/http-kit';
import { createNotifierRuntime } from '@chat/notifier';
import { createLogger, type Logger } from '@chat/observability';
import { openProcessResources, type ProcessResources } from '@chat/process-resources';
import { lockDataDir, type DataDirLock } from '@chat/store';
import { attachStreamFront, createGatewayRuntime } from '@chat/stream-gateway';
import { startTracing } from '@chat/tracing';
import { createViewerRoutes } from '@chat/viewer';
import type { AllInOneConfig } from './config.ts';
import { demoBanner } from './demo-banner.ts';
import { registerViewerCallback, viewerConfig } from './viewer-setup.ts';

export interface RunningAllInOne {
  url: string;
  coreUrl: string;
  banner: string;
  stop(): Promise<void>;
}

/**
 * Starts every part in this process and answers once the public port is listening. The parts share
 * one set of process resources (one store, one backbone, one core client and token cache, one cursor codec) and one
 * route pipeline over the API's, the gateway's and the viewer's route tables.
 */
export async function startAllInOne(config: AllInOneConfig): Promise<RunningAllInOne> {
  const logger = createLogger({ name: 'chat', level: config.log.level, pretty: config.log.pretty });

  // The embedded database's folder is taken before anything else starts, dev-core included: a second
  // process on the folder stops here, naming the owner, before it binds a port or writes a file.
  let dataDirLock: DataDirLock | undefined;
  if (!config.database.url) {
    dataDirLock = await lockDataDir(config.database.dataDir);
    const previous = dataDirLock.tookOverFrom;
    if (previous) logger.warn({ dataDir: dataDirLock.dir, previousPid: previous.pid, previousSince: previous.since }, 'took over the data folder from a process that no longer runs');
  }
  const tracing = await startTracing(config.tracing, logger);
  const { devCore, resources } = await startCoreAndResources(config, logger, dataDirLock).catch(async (err: unknown) => {
    await dataDirLock?.release();
    throw err;
  });
  const coreUrl = config.core.url ?? devCore!.url;
  const gateway = createGatewayRuntime({ resources, logger: logger.child({ component: 'stream-gateway' }), engine: config.gateway.engine });
  const api = createApiRuntime({ resources, logger, bodyLimitBytes: config.api.bodyLimitBytes, rateLimit: config.api.rateLimit, webhooks: config.api.webhooks });
  api.outbox.relay.start();
  api.rateWindowSweeper.start();
  const notifier = createNotifierRuntime({ resources, logger, settings: { webhooks: config.webhookDelivery } });
  await notifier.start();

  let url = '';
  const viewer = createViewerRoutes(() => viewerConfig({ url, coreUrl }), { logger, httpDuration: api.deps.metrics.httpDuration });
  const pipeline = createRoutePipeline([api.routes, gateway.routes, viewer]);
  // Stream GETs are read off the socket by the gateway's own front (held streams keep no Node request
  // or response); every other request goes through Node's server. Both serve through the one pipeline.
  const http = await listen(pipeline.listener, config.http.port, config.http.host, config.http.limits, (server) =>
    attachStreamFront(server, { pipeline, headersTimeoutMs: config.http.limits.headersTimeoutMs }),
  );
  url = `http://127.0.0.1:${http.port}`;
  if (devCore) registerViewerCallback(devCore, url, logger);
  logger.info({ url, coreUrl, database: resources.database.kind, backbone: config.redis.url ? 'redis' : 'in-process' }, 'chat listening');

  const banner = await demoBanner({ url, coreUrl, host: config.http.host, devCore: config.printDemoTokens ? devCore : undefined });
  return {
    url,
    coreUrl,
    banner,
    async stop() {
      const closing = http.shutdown(config.api.shutdownGraceMs);
      await gateway.drain(config.gateway.drainMs);
      await gateway.close();
      await closing;
      await api.outbox.relay.stop();
      await api.rateWindowSweeper.stop();
      await api.outbox.flush();
      await notifier.stop();
      await resources.close();
      await devCore?.close();
      await dataDirLock?.release();
      await tracing.shutdown();
    },
  };
}

/** The embedded dev-core (unless `CORE_URL` names a core) and the process resources; dev-core is closed again if they fail to open. */
async function startCoreAndResources(config: AllInOneConfig, logger: Logger, dataDirLock: DataDirLock | undefined): Promise<{ devCore: DevCoreHandle | undefined; resources: ProcessResources }> {
  const devCore = config.core.url
    ? undefined
    : await startDevCore({
        port: config.devCore.port,
        host: config.devCore.host,
        keysDir: config.devCore.keysDir,
        serviceToken: config.core.serviceToken,
        logger: logger.child({ component: 'dev-core' }),
        limits: config.http.limits,
        ...(config.devCore.fixturePath ? { fixturePath: config.devCore.fixturePath } : {}),
      });
  try {
    const resources = await openProcessResources(
      {
        database: config.database,
        redis: config.redis,
        core: { ...config.core, url: config.core.url ?? devCore!.url },
        cursor: config.cursor,
        streamCaps: config.gateway.caps,
        ...(dataDirLock ? { dataDirLock } : {}),
      },
      logger,
    );
    return { devCore, resources };
  } catch (err) {
    await devCore?.close();
    throw err;
  }
}
