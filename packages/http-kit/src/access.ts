import type { NextFunction, Request, Response } from 'express';
import { authorizeScope, type CoreClient, type TokenVerifier } from '@chat/authz-client';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import './locals.ts';

/** Verifies the bearer token (either scheme of spec section 5) and records who is calling. */
export function authenticate(tokens: TokenVerifier) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    res.locals.principal = await tokens.verify(req.headers.authorization);
    next();
  };
}

/** Reads `repositoryId` and, on branch routes, `branchId`; both must be canonical ULIDs. */
export function parseScope(req: Request, res: Response, next: NextFunction): void {
  const { repositoryId, branchId } = req.params as { repositoryId?: string; branchId?: string };
  if (!isCanonicalUlid(repositoryId)) throw new AppError('SCOPE_INVALID', 'repositoryId must be a canonical ULID.');
  if (branchId !== undefined && !isCanonicalUlid(branchId)) throw new AppError('SCOPE_INVALID', 'branchId must be a canonical ULID.');
  res.locals.scope = { repositoryId, branchId: branchId ?? null };
  next();
}

/**
 * Asks core, live, whether the caller may `action` on the scope (for a branch route core also checks
 * that the branch belongs to the repository). It runs before any room lookup, so a denial looks the
 * same whether or not the room exists.
 */
export function authorize(core: CoreClient, action: 'read' | 'write') {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const { principal, scope } = res.locals;
    res.locals.access = await authorizeScope(
      core,
      principal,
      { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action },
      { requestId: res.locals.requestId },
    );
    next();
  };
}
