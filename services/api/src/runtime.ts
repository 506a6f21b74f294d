import { createCoreClient, createTokenVerifier } from '@chat/authz-client';
import type { Backbone } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import { createStore, loadCursorCodec, type Database } from '@chat/store';
import type { RequestListener } from 'node:http';
import type { Express, Router } from 'express';
import { createApiApp } from './app.ts';
import type { ApiDeps } from './deps.ts';
import type { AppendRateLimiter } from './domain/append-rate-limiter.ts';
import { NO_APPEND_FAULTS, type AppendFaults } from './domain/append-faults.ts';
import { createOutbox, type Outbox } from './outbox/outbox.ts';
import { createApiMetrics, type ApiMetrics } from './metrics.ts';
import { createApiListener } from './routes/append-listener.ts';

export interface ApiRuntimeOptions {
  database: Database;
  backbone: Backbone;
  rateLimiter: AppendRateLimiter;
  logger: Logger;
  core: { url: string; serviceToken: string; timeoutMs: number };
  cursor: { secret?: string | undefined; previousSecrets: string[] };
  bodyLimitBytes: number;
  extraRouters?: Router[];
  /** @defaultValue a fresh registry with the API's instruments */
  metrics?: ApiMetrics;
  /** Test-only crash points of the append path. @defaultValue none */
  faults?: AppendFaults;
}

export interface ApiRuntime {
  deps: ApiDeps;
  app: Express;
  /** What the API's server runs: plain appends without express, everything else through `app`. */
  listener: RequestListener;
  /** Start its relay; on shutdown, after the server stops, stop the relay and flush. */
  outbox: Outbox;
}

/** Wires the API's dependencies over an opened (and migrated) database and a backbone. */
export async function createApiRuntime(options: ApiRuntimeOptions): Promise<ApiRuntime> {
  const store = createStore(options.database);
  const metrics = options.metrics ?? createApiMetrics({ outbox: store.outbox });
  const outbox = createOutbox({ store, backbone: options.backbone, logger: options.logger });
  const deps: ApiDeps = {
    store,
    tokens: createTokenVerifier({ coreUrl: options.core.url }),
    core: createCoreClient({
      coreUrl: options.core.url,
      serviceToken: options.core.serviceToken,
      timeoutMs: options.core.timeoutMs,
      observe: (operation, seconds, outcome) => metrics.coreCalls.observe({ operation, outcome }, seconds),
    }),
    cursors: await loadCursorCodec(store.serviceKeys, options.cursor),
    logger: options.logger,
    clock: () => new Date(),
    publisher: outbox.publisher,
    rateLimiter: options.rateLimiter,
    faults: options.faults ?? NO_APPEND_FAULTS,
    metrics,
    limits: { bodyLimitBytes: options.bodyLimitBytes },
  };
  const app = createApiApp(deps, options.extraRouters ? { extraRouters: options.extraRouters } : {});
  return { deps, app, listener: createApiListener(deps, app), outbox };
}
