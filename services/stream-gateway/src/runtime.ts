import { createRoutePipeline, type RoutePipeline, type RouteTable } from '@chat/http-kit';
import type { ScopeAccess } from '@chat/authz-client';
import type { Logger } from '@chat/observability';
import type { ProcessResources } from '@chat/process-resources';
import type { GatewayDeps } from './deps.ts';
import type { StreamEngine } from './domain/stream-engine.ts';
import { OpenRate } from './domain/open-rate.ts';
import { StreamHub } from './domain/stream-hub.ts';
import { createGatewayMetrics, type GatewayMetrics } from './metrics.ts';
import { gatewayRoutes } from './routes/gateway-routes.ts';
import { resolveEngineSettings, type StreamEngineSettings } from './settings.ts';

export interface GatewayRuntimeOptions {
  /** The process's shared resources (store, backbone, core, tokens, cursors, stream leases). */
  resources: ProcessResources;
  logger: Logger;
  /** Engine tunables. @defaultValue DEFAULT_ENGINE_SETTINGS */
  engine?: Partial<StreamEngineSettings>;
  /** @defaultValue () => new Date() */
  clock?: () => Date;
}

export interface GatewayRuntime {
  deps: GatewayDeps;
  hub: StreamHub;
  metrics: GatewayMetrics;
  /** The gateway's routes, for a process's pipeline (the all-in-one serves them beside the API's). */
  routes: RouteTable<ScopeAccess>;
  /** The standalone gateway's pipeline: its routes, for Node's server and the stream front alike. */
  pipeline: RoutePipeline;
  /** Hands every stream off over `windowMs`, then closes what is left; new streams get 503 meanwhile. */
  drain(windowMs: number): Promise<void>;
  /** Closes every stream at once and drops the backbone subscriptions (the process resources stay open). */
  close(): Promise<void>;
}

/** Wires the gateway over the process's resources. */
export function createGatewayRuntime(options: GatewayRuntimeOptions): GatewayRuntime {
  const { resources, logger } = options;
  const settings = resolveEngineSettings(options.engine);
  // The metrics read the hub at scrape time, and the hub records into them.
  const metrics = createGatewayMetrics(() => hub, { poolStats: () => resources.database.poolStats(), coreQueue: () => resources.core.takeAuthorizationQueuePeak() });
  const hub: StreamHub = new StreamHub({ backbone: resources.backbone, logger, ordering: settings, tickMs: settings.tickMs, metrics });
  const detach = resources.observeCoreCalls((operation, seconds, outcome) => metrics.coreCalls.observe({ operation, outcome }, seconds));
  const engine: StreamEngine = {
    hub,
    settings,
    outputLimits: { maxEvents: settings.maxEvents, maxBytes: settings.maxBytes },
    logger,
    metrics,
    now: Date.now,
  };
  const deps: GatewayDeps = {
    store: resources.store,
    tokens: resources.tokens,
    core: resources.core,
    cursors: resources.cursors,
    leases: resources.leases,
    engine,
    logger,
    clock: options.clock ?? (() => new Date()),
  };
  const openRate = new OpenRate({ opensPerSecond: settings.opensPerSecond, burst: settings.openBurst });
  const routes = gatewayRoutes(deps, hub, () => {
    try {
      openRate.admit();
    } catch (err) {
      metrics.openThrottled();
      throw err;
    }
  });
  return {
    deps,
    hub,
    metrics,
    routes,
    pipeline: createRoutePipeline([routes]),
    drain: (windowMs) => hub.drain(windowMs),
    close: async () => {
      detach();
      await hub.close();
    },
  };
}
