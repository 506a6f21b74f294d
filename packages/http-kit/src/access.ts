import type { IncomingHttpHeaders } from 'node:http';
import { authorizeScope, type CoreClient, type ScopeAuthorization, type TokenVerifier, type VerifiedPrincipal } from '@chat/authz-client';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import type { RequestScope } from './route.ts';

/** The three access steps of a scoped route, in order, on what the pipeline read of the request. */
export interface AccessDecision {
  principal: VerifiedPrincipal;
  scope: RequestScope;
  access: ScopeAuthorization;
}

/** Reads `repositoryId` and, on branch routes, `branchId`; both must be canonical ULIDs. */
export function parseScope(params: Record<string, string>): RequestScope {
  const { repositoryId, branchId } = params;
  if (!isCanonicalUlid(repositoryId)) throw new AppError('SCOPE_INVALID', 'repositoryId must be a canonical ULID.');
  if (branchId !== undefined && !isCanonicalUlid(branchId)) throw new AppError('SCOPE_INVALID', 'branchId must be a canonical ULID.');
  return { repositoryId, branchId: branchId ?? null };
}

/**
 * Verifies the bearer token (either scheme of spec section 5), reads the scope, then asks core, live,
 * whether the caller may `action` on it (for a branch core also checks that the branch belongs to the
 * repository). Core is asked before any room lookup, so a denial looks the same whether or not the
 * room exists.
 */
export async function decideAccess(
  deps: { tokens: TokenVerifier; core: CoreClient },
  request: { headers: IncomingHttpHeaders; params: Record<string, string>; requestId: string },
  action: 'read' | 'write',
): Promise<AccessDecision> {
  const principal = await deps.tokens.verify(request.headers.authorization);
  const scope = parseScope(request.params);
  const access = await authorizeScope(
    deps.core,
    principal,
    { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action },
    { requestId: request.requestId },
  );
  return { principal, scope, access };
}
