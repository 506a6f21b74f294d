import type { ScopeAuthorization, VerifiedPrincipal } from '@chat/authz-client';
import type { Logger } from '@chat/observability';

/** The room scope of a request: the repository, and the branch on branch routes. */
export interface RequestScope {
  repositoryId: string;
  branchId: string | null;
}

declare module 'express-serve-static-core' {
  interface Locals {
    /** The request's ID: the client's well-formed `X-Request-Id`, or a ULID. */
    requestId: string;
    /** The request's logger: the process logger, bound to `requestId` once assignRequestId ran. */
    log?: Logger;
    principal: VerifiedPrincipal;
    scope: RequestScope;
    access: ScopeAuthorization;
  }
}
