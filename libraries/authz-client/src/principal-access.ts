import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '@chat/contracts';
import type { CallOptions, CoreClient } from './core-client.ts';
import { corePrincipalOf } from './core-principal.ts';
import type { TokenVerifier } from './token-verifier.ts';
import type { VerifiedPrincipal } from './verified-principal.ts';

/**
 * Who is calling and which repositories it may read now (by ID, archived ones included): what a
 * handler of a route on the caller's own data across repositories is given.
 */
export interface PrincipalAccess {
  principal: VerifiedPrincipal;
  readable: ReadonlySet<string>;
}

/**
 * Asks core, live, for the repositories `principal` may read: one discovery call, with the token's
 * identifiers. `principal_invalid` (a revoked token or credential, an uninstalled app) →
 * TOKEN_REJECTED (401); no well-formed answer in time → AUTHORIZATION_UNAVAILABLE (503), so callers
 * fail closed. A stream calls it again on each periodic recheck.
 */
export async function listReadableRepositories(core: CoreClient, principal: VerifiedPrincipal, options?: CallOptions): Promise<ReadonlySet<string>> {
  const listing = await core.listRepositories({ principal: corePrincipalOf(principal), action: 'read' }, options);
  if (listing.decision === 'principal_invalid') throw new AppError('TOKEN_REJECTED', 'The bearer token was rejected.');
  return new Set(listing.repositories.map((r) => r.repositoryId));
}

/**
 * The access steps of a route on the caller's own data: verifies the bearer token (either scheme of
 * spec section 5) and tells `authenticated` whom it speaks for, then asks core once for the
 * repositories the caller may read.
 */
export async function decidePrincipalAccess(
  deps: { tokens: TokenVerifier; core: CoreClient },
  request: { headers: IncomingHttpHeaders; requestId: string; authenticated?: (principal: VerifiedPrincipal) => void },
): Promise<PrincipalAccess> {
  const principal = await deps.tokens.verify(request.headers.authorization);
  request.authenticated?.(principal);
  const readable = await listReadableRepositories(deps.core, principal, { requestId: request.requestId });
  return { principal, readable };
}
