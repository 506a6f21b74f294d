import type { IncomingHttpHeaders } from 'node:http';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import { authorizeScope, type ScopeAuthorization } from './authorize-scope.ts';
import type { CoreClient } from './core-client.ts';
import type { TokenVerifier } from './token-verifier.ts';
import type { VerifiedPrincipal } from './verified-principal.ts';

/** The room scope of a request: the repository, and the branch on branch routes. */
export interface RequestScope {
  repositoryId: string;
  branchId: string | null;
}

/** Who is calling, on which room scope, and what core decided: what a scoped route's handler is given. */
export interface ScopeAccess {
  principal: VerifiedPrincipal;
  scope: RequestScope;
  access: ScopeAuthorization;
}

/** Reads `repositoryId` and, on branch routes, `branchId`; both must be canonical ULIDs. */
function parseScope(params: Record<string, string>): RequestScope {
  const { repositoryId, branchId } = params;
  if (!isCanonicalUlid(repositoryId)) throw new AppError('SCOPE_INVALID', 'repositoryId must be a canonical ULID.');
  if (branchId !== undefined && !isCanonicalUlid(branchId)) throw new AppError('SCOPE_INVALID', 'branchId must be a canonical ULID.');
  return { repositoryId, branchId: branchId ?? null };
}

/**
 * The access steps of a route on a room scope, in order. Verifies the bearer token (either scheme of
 * spec section 5) and tells `authenticated` whom it speaks for, reads the scope, then asks core, live,
 * whether the caller may `action` on it (for a branch core also checks that the branch belongs to the
 * repository). Core is asked before any room lookup, so a denial looks the same whether or not the
 * room exists.
 */
export async function decideScopeAccess(
  deps: { tokens: TokenVerifier; core: CoreClient },
  request: { headers: IncomingHttpHeaders; params: Record<string, string>; requestId: string; authenticated?: (principal: VerifiedPrincipal) => void },
  action: 'read' | 'write',
): Promise<ScopeAccess> {
  const principal = await deps.tokens.verify(request.headers.authorization);
  request.authenticated?.(principal);
  const scope = parseScope(request.params);
  const access = await authorizeScope(
    deps.core,
    principal,
    { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action },
    { requestId: request.requestId },
  );
  return { principal, scope, access };
}
