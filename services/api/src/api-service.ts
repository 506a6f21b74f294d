/**
 * The standalone API process, as a function: `main.ts` runs it, and tests that need to wrap a part
 * of it (the crash tests) run it with their hooks from an entry point of their own.
 */
import type { RequestListener } from 'node:http';
import { startAdminServer, type Logger } from '@chat/observability';
import { openProcessResources } from '@chat/process-resources';
import type { ApiConfig } from './config.ts';
import type { CommittedMessagePublisher } from './outbox/outbox.ts';
import { listen } from './http-server.ts';
import { createApiRuntime } from './runtime.ts';

/** Wrappers a test entry point may put around parts of the API. */
export interface ApiServiceHooks {
  decoratePublisher?: (publisher: CommittedMessagePublisher) => CommittedMessagePublisher;
  decorateListener?: (listener: RequestListener) => RequestListener;
}

export interface RunningApiService {
  port: number;
  adminUrl: string;
  /** Drains in-flight requests, stops the relay, flushes the publisher and closes the process resources. */
  shutdown(): Promise<void>;
}

/** Opens the process resources, starts the outbox relay, the public server and the admin server. */
export async function startApiService(config: ApiConfig, logger: Logger, hooks: ApiServiceHooks = {}): Promise<RunningApiService> {
  const resources = await openProcessResources(config, logger);
  const api = createApiRuntime({
    resources,
    logger,
    bodyLimitBytes: config.api.bodyLimitBytes,
    rateLimit: config.api.rateLimit,
    webhooks: config.api.webhooks,
    ...(hooks.decoratePublisher ? { decoratePublisher: hooks.decoratePublisher } : {}),
  });
  api.outbox.relay.start();
  api.rateWindowSweeper.start();
  const listener = hooks.decorateListener ? hooks.decorateListener(api.listener) : api.listener;
  const http = await listen(listener, config.http.port, config.http.host, config.http.limits);
  let draining = false;
  const admin = await startAdminServer({
    port: config.admin.port,
    host: config.admin.host,
    registry: api.deps.metrics.registry,
    isDraining: () => draining,
    // Not Redis: an append needs PostgreSQL and core only (a publish Redis misses is left to the
    // outbox relay), so an API pod stays in service through a Redis outage or failover.
    checks: resources.readinessChecks().filter((c) => c.name !== 'redis'),
    logger,
  });
  logger.info({ port: http.port, admin: admin.url }, 'chat api listening');
  return {
    port: http.port,
    adminUrl: admin.url,
    async shutdown() {
      draining = true;
      await http.shutdown(config.api.shutdownGraceMs);
      await api.outbox.relay.stop();
      await api.rateWindowSweeper.stop();
      await api.outbox.flush();
      await admin.close();
      await resources.close();
    },
  };
}
