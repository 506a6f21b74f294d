import { createCoreClient, createTokenVerifier } from '@chat/authz-client';
import type { Backbone } from '@chat/backbone';
import type { StreamLeaseRegistry } from '@chat/coordination';
import { AppError } from '@chat/contracts';
import type { Logger } from '@chat/observability';
import { createStore, loadCursorCodec, type Database } from '@chat/store';
import express, { Router, type Express } from 'express';
import type { RequestListener } from 'node:http';
import type { GatewayDeps } from './deps.ts';
import type { StreamEngine } from './domain/stream-engine.ts';
import { StreamHub } from './domain/stream-hub.ts';
import { assignRequestId, errorHandler } from '@chat/http-kit';
import { createGatewayMetrics, type GatewayMetrics } from './metrics.ts';
import { createInboxStreamRouter } from './routes/inbox-streams.routes.ts';
import { createStreamRouter } from './routes/room-streams.routes.ts';
import { createStreamListener } from './routes/stream-listener.ts';
import { resolveEngineSettings, type StreamEngineSettings } from './settings.ts';

export interface GatewayRuntimeOptions {
  /** An opened, migrated database. */
  database: Database;
  backbone: Backbone;
  /** Stream caps (in-process for one process, Redis across gateways). */
  leases: StreamLeaseRegistry;
  logger: Logger;
  core: { url: string; serviceToken: string; timeoutMs: number };
  cursor: { secret?: string | undefined; previousSecrets: string[] };
  /** Engine tunables. @defaultValue DEFAULT_ENGINE_SETTINGS */
  engine?: Partial<StreamEngineSettings>;
  /** @defaultValue () => new Date() */
  clock?: () => Date;
}

export interface GatewayRuntime {
  deps: GatewayDeps;
  hub: StreamHub;
  metrics: GatewayMetrics;
  /** The stream routes alone, for mounting into another app (the all-in-one). */
  router: Router;
  /** A standalone app: the stream routes, `GET /healthz`, and envelope 404s. */
  app: Express;
  /**
   * What the standalone gateway serves (`http.createServer(listener)`): stream GETs on Node's own
   * request and response, everything else through `app` (see `routes/stream-listener.ts`).
   */
  listener: RequestListener;
  /**
   * The same for a process that serves streams next to other routes (the all-in-one): stream GETs
   * on Node's own objects, everything else through `app`.
   */
  listenerFor(app: RequestListener): RequestListener;
  /** Hands every stream off over `windowMs`, then closes what is left; new streams get 503 meanwhile. */
  drain(windowMs: number): Promise<void>;
  /** Closes every stream at once and drops the backbone subscriptions (the caller closes what it passed in). */
  close(): Promise<void>;
}

/** Wires the gateway over an opened database, a backbone and a lease registry. */
export async function createGatewayRuntime(options: GatewayRuntimeOptions): Promise<GatewayRuntime> {
  const settings = resolveEngineSettings(options.engine);
  const clock = options.clock ?? (() => new Date());
  const store = createStore(options.database);
  const hub = new StreamHub({ backbone: options.backbone, logger: options.logger, tickMs: settings.tickMs });
  const metrics = createGatewayMetrics(() => hub);
  const engine: StreamEngine = {
    hub,
    settings,
    outputLimits: { maxEvents: settings.maxEvents, maxBytes: settings.maxBytes },
    logger: options.logger,
    metrics,
    now: Date.now,
  };
  const deps: GatewayDeps = {
    store,
    tokens: createTokenVerifier({ coreUrl: options.core.url }),
    core: createCoreClient({
      coreUrl: options.core.url,
      serviceToken: options.core.serviceToken,
      timeoutMs: options.core.timeoutMs,
      observe: (operation, seconds, outcome) => metrics.coreCalls.observe({ operation, outcome }, seconds),
    }),
    cursors: await loadCursorCodec(store.serviceKeys, options.cursor),
    leases: options.leases,
    engine,
    logger: options.logger,
    clock,
  };
  const router = Router().use(createStreamRouter(deps), createInboxStreamRouter(deps));
  const app = standaloneApp(router, hub, options.logger);
  return {
    deps,
    hub,
    metrics,
    router,
    app,
    listener: createStreamListener(deps, app),
    listenerFor: (other) => createStreamListener(deps, other),
    drain: (windowMs) => hub.drain(windowMs),
    close: () => hub.close(),
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
