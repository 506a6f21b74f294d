import { createRoutePipeline, type RouteTable } from '@chat/http-kit';
import type { ScopeAccess } from '@chat/authz-client';
import type { Logger } from '@chat/observability';
import type { ProcessResources } from '@chat/process-resources';
import type { WebhookAddressConfig } from '@chat/service-config';
import type { AppendRateLimit } from '@chat/store';
import { OutboundAddressGuard } from '@chat/webhooks';
import type { RequestListener } from 'node:http';
import type { ApiDeps } from './deps.ts';
import { createOutbox, type CommittedMessagePublisher, type Outbox } from './outbox/outbox.ts';
import { createApiMetrics, type ApiMetrics } from './metrics.ts';
import { apiRoutes } from './routes/api-routes.ts';
import { rateWindowSweeper } from './maintenance/rate-window-sweeper.ts';
import type { PeriodicTask } from './maintenance/periodic-task.ts';

export interface ApiRuntimeOptions {
  /** The process's shared resources (store, backbone, core, tokens, cursors). */
  resources: ProcessResources;
  logger: Logger;
  bodyLimitBytes: number;
  rateLimit: AppendRateLimit;
  /** @defaultValue a fresh registry with the API's instruments */
  metrics?: ApiMetrics;
  /**
   * Wraps the publisher each append hands its committed message to; the crash tests put their kill
   * points here. @defaultValue none
   */
  decoratePublisher?: (publisher: CommittedMessagePublisher) => CommittedMessagePublisher;
  /** @defaultValue () => new Date() */
  clock?: () => Date;
  /**
   * Where a registered webhook may point, and how many a principal may hold.
   * @defaultValue {@link PRODUCTION_WEBHOOKS}: public addresses only, 5 per principal
   */
  webhooks?: WebhookAddressConfig;
}

/** The webhook rule of a service told nothing: https to public addresses only, and 5 per principal. */
export const PRODUCTION_WEBHOOKS: WebhookAddressConfig = { allowLoopback: false, allowedCidrs: [], perPrincipal: 5 };

export interface ApiRuntime {
  deps: ApiDeps;
  /** The API's routes, for a process's pipeline (the all-in-one serves them beside the gateway's). */
  routes: RouteTable<ScopeAccess>;
  /** The standalone API's request listener: its routes through the pipeline. */
  listener: RequestListener;
  /** Start its relay; on shutdown, after the server stops, stop the relay and flush. */
  outbox: Outbox;
  /** Start it with the relay; stop it on shutdown. */
  rateWindowSweeper: PeriodicTask;
  /** Stops recording core calls into this runtime's metrics. */
  detach(): void;
}

/** Wires the API's routes and use cases over the process's resources. */
export function createApiRuntime(options: ApiRuntimeOptions): ApiRuntime {
  const { resources, logger } = options;
  const metrics = options.metrics ?? createApiMetrics({ outbox: resources.store.outbox, poolStats: () => resources.database.poolStats() });
  const detach = resources.observeCoreCalls((operation, seconds, outcome) => metrics.coreCalls.observe({ operation, outcome }, seconds));
  const outbox = createOutbox({ store: resources.store, backbone: resources.backbone, logger });
  const publisher = outbox.publisher;
  const clock = options.clock ?? (() => new Date());
  const webhooks = options.webhooks ?? PRODUCTION_WEBHOOKS;
  const deps: ApiDeps = {
    store: resources.store,
    tokens: resources.tokens,
    core: resources.core,
    cursors: resources.cursors,
    logger,
    clock,
    publisher: options.decoratePublisher ? options.decoratePublisher(publisher) : publisher,
    rateLimit: options.rateLimit,
    onReleaseFailure: (err) => logger.warn({ err }, 'could not give an append rate unit back'),
    metrics,
    limits: { bodyLimitBytes: options.bodyLimitBytes },
    webhooks: { addresses: new OutboundAddressGuard(webhooks), perPrincipal: webhooks.perPrincipal },
  };
  const routes = apiRoutes(deps);
  // A sweep every window's length (between 5 s and a minute) keeps the table near one window's budgets.
  const sweepEveryMs = Math.max(5_000, Math.min(options.rateLimit.windowSeconds * 1000, 60_000));
  const sweeper = rateWindowSweeper(resources.store.rateWindows, options.rateLimit, { logger, intervalMs: sweepEveryMs, clock });
  return { deps, routes, listener: createRoutePipeline([routes]).listener, outbox, rateWindowSweeper: sweeper, detach: () => void detach() };
}
