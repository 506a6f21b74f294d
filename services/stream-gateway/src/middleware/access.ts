import type { NextFunction, Request, Response } from 'express';
import { authorizeScope, type ScopeAuthorization, type VerifiedPrincipal } from '@chat/authz-client';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import type { RoomScope } from '@chat/store';
import type { GatewayDeps } from '../deps.ts';

declare module 'express-serve-static-core' {
  interface Locals {
    principal: VerifiedPrincipal;
    scope: RoomScope;
    access: ScopeAuthorization;
  }
}

/** Verifies the bearer token (either scheme) and records who is calling. */
export function authenticate(deps: Pick<GatewayDeps, 'tokens'>) {
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

/** Live read authorization from core, before any room lookup, so a denial never reveals whether a room exists. */
export function authorizeRead(deps: Pick<GatewayDeps, 'core'>) {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const { principal, scope } = res.locals;
    res.locals.access = await authorizeScope(deps.core, principal, scopeRequest(scope), { requestId: res.locals.requestId });
    next();
  };
}

/** The core request for reading a room scope. */
export function scopeRequest(scope: RoomScope): { repositoryId: string; branchId?: string; action: 'read' } {
  return { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action: 'read' };
}

/** Streams answer only clients that accept text/event-stream (no Accept, `*\/*` and `text/*` do). */
export function requireEventStream(req: Request): void {
  if (req.accepts('text/event-stream') === false) {
    throw new AppError('REQUEST_INVALID', 'This endpoint answers text/event-stream; send Accept: text/event-stream.');
  }
}
