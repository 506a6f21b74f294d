import express, { type Express, type Router } from 'express';
import { AppError } from '@chat/contracts';
import { accessLog, assignRequestId, errorHandler, noStore } from '@chat/http-kit';
import type { ApiDeps } from './deps.ts';
import { inboxRouter } from './routes/inbox.routes.ts';
import { openApiRouter } from './routes/openapi.routes.ts';
import { roomsRouter } from './routes/rooms.routes.ts';

export interface ApiAppOptions {
  /** Extra routers mounted before the 404 fallback (the all-in-one mounts the stream gateway here). */
  extraRouters?: Router[];
}

/** The public HTTP API: request IDs, no caching, JSON parsing, the routes, then the one error writer. */
export function createApiApp(deps: ApiDeps, options: ApiAppOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(accessLog(deps.logger, deps.metrics.httpDuration));
  app.use(noStore);
  app.use(assignRequestId);
  app.use(openApiRouter());
  app.use(roomsRouter(deps));
  app.use(inboxRouter(deps));
  for (const router of options.extraRouters ?? []) app.use(router);
  app.use(() => {
    throw new AppError('RESOURCE_NOT_FOUND', 'No such resource.');
  });
  app.use(errorHandler(deps.logger));
  return app;
}
