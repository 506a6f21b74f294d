import { AppError } from '@chat/contracts';
import { assignRequestId, createHttpEntry, errorHandler, type FastRoute } from '@chat/http-kit';
import type { Logger } from '@chat/observability';
import type { Platform } from '@chat/platform';
import express, { Router, type Express } from 'express';
import type { RequestListener } from 'node:http';
import type { GatewayDeps } from './deps.ts';
import type { StreamEngine } from './domain/stream-engine.ts';
import { StreamHub } from './domain/stream-hub.ts';
import { createGatewayMetrics, type GatewayMetrics } from './metrics.ts';
import { createInboxStreamRouter } from './routes/inbox-streams.routes.ts';
import { createStreamRouter } from './routes/room-streams.routes.ts';
import { streamFastRoutes } from './routes/stream-listener.ts';
import { resolveEngineSettings, type StreamEngineSettings } from './settings.ts';

export interface GatewayRuntimeOptions {
  /** The process's shared resources (store, backbone, core, tokens, cursors, stream leases). */
  platform: Platform;
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
  /** The stream routes alone, for mounting into another app (the all-in-one's express fallback). */
  router: Router;
  /** A standalone app: the stream routes, `GET /healthz`, and envelope 404s. */
  app: Express;
  /** The stream GETs as fast routes, for the process's HTTP entry. */
  fastRoutes: FastRoute[];
  /** The standalone gateway's HTTP entry: stream GETs as fast routes, `app` for everything else. */
  listener: RequestListener;
  /** Hands every stream off over `windowMs`, then closes what is left; new streams get 503 meanwhile. */
  drain(windowMs: number): Promise<void>;
  /** Closes every stream at once and drops the backbone subscriptions (the platform stays open). */
  close(): Promise<void>;
}

/** Wires the gateway over the process's platform. */
export function createGatewayRuntime(options: GatewayRuntimeOptions): GatewayRuntime {
  const { platform, logger } = options;
  const settings = resolveEngineSettings(options.engine);
  const hub = new StreamHub({ backbone: platform.backbone, logger, tickMs: settings.tickMs });
  const metrics = createGatewayMetrics(() => hub);
  const detach = platform.observeCoreCalls((operation, seconds, outcome) => metrics.coreCalls.observe({ operation, outcome }, seconds));
  const engine: StreamEngine = {
    hub,
    settings,
    outputLimits: { maxEvents: settings.maxEvents, maxBytes: settings.maxBytes },
    logger,
    metrics,
    now: Date.now,
  };
  const deps: GatewayDeps = {
    store: platform.store,
    tokens: platform.tokens,
    core: platform.core,
    cursors: platform.cursors,
    leases: platform.leases,
    engine,
    logger,
    clock: options.clock ?? (() => new Date()),
  };
  const router = Router().use(createStreamRouter(deps), createInboxStreamRouter(deps));
  const app = standaloneApp(router, hub, logger);
  const fastRoutes = streamFastRoutes(deps);
  return {
    deps,
    hub,
    metrics,
    router,
    app,
    fastRoutes,
    listener: createHttpEntry(fastRoutes, app),
    drain: (windowMs) => hub.drain(windowMs),
    close: async () => {
      detach();
      await hub.close();
    },
  };
}

function standaloneApp(router: Router, hub: StreamHub, logger: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.get('/healthz', assignRequestId, (_req, res) => {
    res.status(hub.stats().draining ? 503 : 200).json({ status: hub.stats().draining ? 'draining' : 'ok' });
  });
  app.use(router);
  app.use(assignRequestId, () => {
    throw new AppError('RESOURCE_NOT_FOUND', 'No such resource.');
  });
  app.use(errorHandler(logger));
  return app;
}
