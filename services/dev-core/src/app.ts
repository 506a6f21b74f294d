import express, { type Express } from 'express';
import type { DevCoreContext } from './domain/dev-core-context.ts';
import { commitLookupRoutes } from './routes/commit-lookup.routes.ts';
import { devHostGuard } from './routes/dev-host-guard.ts';
import { devRoutes } from './routes/dev.routes.ts';
import { directoryRoutes } from './routes/directory.routes.ts';
import { errorHandler } from './routes/http-errors.ts';
import { internalRoutes } from './routes/internal.routes.ts';
import { jwksRoutes } from './routes/jwks.routes.ts';
import { marketplaceOAuthRoutes } from './routes/marketplace-oauth.routes.ts';
import { repositoriesRoutes } from './routes/repositories.routes.ts';
import { sessionRoutes } from './routes/session.routes.ts';

/** Builds dev-core's express app over one context. */
export function createApp(ctx: DevCoreContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      ctx.logger.debug(
        { method: req.method, path: req.path, status: res.statusCode, ms: Math.round(performance.now() - started) },
        'request',
      );
    });
    next();
  });
  // Before the body is read: a request refused for its Host costs nothing more.
  app.use('/dev', devHostGuard(ctx.publicUrl));
  app.use(express.json({ limit: '5mb' }));
  app.use(jwksRoutes(ctx));
  app.use(internalRoutes(ctx));
  app.use(devRoutes(ctx));
  app.use(sessionRoutes(ctx));
  app.use(marketplaceOAuthRoutes(ctx));
  app.use(commitLookupRoutes(ctx));
  app.use(directoryRoutes(ctx));
  app.use(repositoriesRoutes(ctx));
  app.use((_req, res) => {
    res.status(404).json({ error: { code: 'not_found', message: 'no such endpoint' } });
  });
  app.use(errorHandler(ctx.logger));
  return app;
}
