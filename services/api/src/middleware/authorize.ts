import type { NextFunction, Request, Response } from 'express';
import { authorizeScope, type ScopeAuthorization } from '@chat/authz-client';
import type { ApiDeps } from '../deps.ts';

declare module 'express-serve-static-core' {
  interface Locals {
    access: ScopeAuthorization;
  }
}

/**
 * Asks core, live, whether the caller may `action` on the scope (for a branch route core also checks
 * that the branch belongs to the repository). It runs before any room lookup, so a denial looks the
 * same whether or not the room exists.
 */
export function authorize(deps: Pick<ApiDeps, 'core'>, action: 'read' | 'write') {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const { principal, scope } = res.locals;
    res.locals.access = await authorizeScope(
      deps.core,
      principal,
      { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action },
      { requestId: res.locals.requestId },
    );
    next();
  };
}
