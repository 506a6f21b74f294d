import type { PublicRoute, RouteServices, RouteTable } from '@chat/http-kit';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { commitLookupRoutes } from './commit-lookup.routes.ts';
import { devHostGuard } from './dev-host-guard.ts';
import { devRoutes } from './dev.routes.ts';
import { directoryRoutes } from './directory.routes.ts';
import { answeringErrors } from './http-errors.ts';
import { internalRoutes } from './internal.routes.ts';
import { jwksRoutes } from './jwks.routes.ts';
import { marketplaceOAuthRoutes } from './marketplace-oauth.routes.ts';
import { repositoriesRoutes } from './repositories.routes.ts';
import { sessionRoutes } from './session.routes.ts';

/** The development surface: no authentication, so only requests addressed to dev-core itself reach it. */
const DEV_PREFIX = '/dev/';

/**
 * dev-core's route table: every route once, from the modules of its areas. The service API comes first
 * (chat calls `authorize` on every request it serves, and the pipeline tries routes in order). Each
 * `/dev/*` route runs behind the `Host` guard, and every handler's refusals are written in core's own
 * error format (see `http-errors.ts`). A malformed `X-Request-Id` is replaced, never refused: core
 * has no such rule.
 */
export function devCoreRoutes(ctx: DevCoreContext, services: RouteServices): RouteTable {
  const guardHost = devHostGuard(ctx.publicUrl);
  const guarded = (route: PublicRoute): PublicRoute['handle'] => {
    if (!route.path.startsWith(DEV_PREFIX)) return route.handle;
    return (request) => {
      guardHost(request.req);
      return route.handle(request);
    };
  };
  const routes: PublicRoute[] = [
    ...internalRoutes(ctx),
    ...jwksRoutes(ctx),
    ...devRoutes(ctx),
    ...sessionRoutes(ctx),
    ...marketplaceOAuthRoutes(ctx),
    ...commitLookupRoutes(ctx),
    ...directoryRoutes(ctx),
    ...repositoriesRoutes(ctx),
  ];
  return {
    service: 'dev-core',
    services,
    malformedRequestId: 'replace',
    routes: routes.map((route) => ({ ...route, handle: answeringErrors(ctx.logger, guarded(route)) })),
  };
}
