import { authorizeScope, type CoreClient, type ScopeRequest, type VerifiedPrincipal } from '@chat/authz-client';
import { AppError } from '@chat/contracts';
import type { SessionGrant } from './stream-session.ts';

/**
 * The live authority of a stream on a repository or branch scope: the token's expiry, and a recheck
 * that asks core again. A denial or a rejected principal is `revoked`; core failing is `unavailable`.
 * A class rather than an object of closures: every idle stream holds one, and methods on the
 * prototype cost nothing per stream.
 */
export class ScopeGrant implements SessionGrant {
  constructor(
    private readonly core: CoreClient,
    private readonly principal: VerifiedPrincipal,
    private readonly request: ScopeRequest,
  ) {}

  get expiresAt(): Date {
    return this.principal.expiresAt;
  }

  async recheck(): Promise<'allowed' | 'revoked' | 'unavailable'> {
    try {
      await authorizeScope(this.core, this.principal, this.request);
      return 'allowed';
    } catch (err) {
      if (err instanceof AppError && (err.code === 'AUTHORIZATION_DENIED' || err.code === 'TOKEN_REJECTED')) return 'revoked';
      return 'unavailable';
    }
  }
}

/** The stream-cap key of a principal: one namespace per kind, so a user and a bot never share slots. */
export function principalKey(principal: VerifiedPrincipal): string {
  return `${principal.kind}:${principal.id}`;
}
