import { listReadableRepositories, type CoreClient, type VerifiedPrincipal } from '@chat/authz-client';
import { AppError } from '@chat/contracts';
import type { PartitionFilter, SessionGrant } from './stream-session.ts';

/**
 * The live authority of a principal-feed stream: the token's expiry, and the repositories the
 * principal may read, which decide what the stream sends (its {@link PartitionFilter}). Each recheck
 * asks core for the set again and replaces it: a repository whose grant was revoked stops, the others
 * go on, a newly readable one starts. A rejected principal is `revoked`; core failing is `unavailable`.
 */
export class FeedGrant implements SessionGrant, PartitionFilter {
  constructor(
    private readonly core: CoreClient,
    private readonly principal: VerifiedPrincipal,
    /** The set core answered when the stream was authorized. */
    private readable: ReadonlySet<string>,
  ) {}

  get expiresAt(): Date {
    return this.principal.expiresAt;
  }

  admits(repositoryId: string | undefined): boolean {
    return repositoryId !== undefined && this.readable.has(repositoryId);
  }

  async recheck(): Promise<'allowed' | 'revoked' | 'unavailable'> {
    try {
      this.readable = await listReadableRepositories(this.core, this.principal);
      return 'allowed';
    } catch (err) {
      if (err instanceof AppError && err.code === 'TOKEN_REJECTED') return 'revoked';
      return 'unavailable';
    }
  }
}
