import type { NextFunction, Request, Response } from 'express';
import type { VerifiedPrincipal } from '@chat/authz-client';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import type { RoomScope } from '@chat/store';
import type { ApiDeps } from '../deps.ts';

declare module 'express-serve-static-core' {
  interface Locals {
    principal: VerifiedPrincipal;
    scope: RoomScope;
  }
}

/** Refuses a request whose `X-Request-Id` was malformed, before anything else happens. */
export function rejectInvalidRequestId(_req: Request, res: Response, next: NextFunction): void {
  if (res.locals.requestIdInvalid) {
    throw new AppError('REQUEST_ID_INVALID', 'X-Request-Id must be 1–128 characters of A–Z, a–z, 0–9, ".", "_", ":" or "-".');
  }
  next();
}

/** Verifies the bearer token (either scheme) and records who is calling. */
export function authenticate(deps: Pick<ApiDeps, 'tokens'>) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    res.locals.principal = await deps.tokens.verify(req.headers.authorization);
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
