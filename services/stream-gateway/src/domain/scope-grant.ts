import { authorizeScope, type CoreClient, type ScopeRequest, type VerifiedPrincipal } from '@chat/authz-client';
import { AppError } from '@chat/contracts';
import type { SessionGrant } from './stream-session.ts';

/**
 * The live authority of a stream on a repository or branch scope: the token's expiry, and a recheck
 * that asks core again. A denial or a rejected principal is `revoked`; core failing is `unavailable`.
 */
export function scopeGrant(core: CoreClient, principal: VerifiedPrincipal, request: ScopeRequest): SessionGrant {
  return {
    expiresAt: principal.expiresAt,
    async recheck() {
      try {
        await authorizeScope(core, principal, request);
        return 'allowed';
      } catch (err) {
        if (err instanceof AppError && (err.code === 'AUTHORIZATION_DENIED' || err.code === 'TOKEN_REJECTED')) return 'revoked';
        return 'unavailable';
      }
    },
  };
}

/** The stream-cap key of a principal: one namespace per kind, so a user and a bot never share slots. */
export function principalKey(principal: VerifiedPrincipal): string {
  return `${principal.kind}:${principal.id}`;
}
