import type { ScopeAccess } from '@chat/authz-client';
import type { AuthorizedRequest } from '@chat/http-kit';
import type { GatewayDeps } from '../deps.ts';
import { reserveInboxStream, resolveInboxStreamTarget } from '../domain/open-inbox-stream.ts';
import { resumeCursor } from '../domain/resume-input.ts';
import { ScopeGrant } from '../domain/scope-grant.ts';
import { openStream } from '../domain/stream-engine.ts';
import { requireEventStream, scopeRequest } from './event-stream.ts';

/**
 * streamRepositoryInbox, once the pipeline authorized reading the repository (what a principal needs
 * for its own inbox there): the resume input and Accept, the caller's inbox-stream slot, then the
 * stream. No materializing: an inbox never notified streams nothing until its first notification.
 * @throws AppError before anything was written.
 */
export async function streamInbox(deps: GatewayDeps, request: AuthorizedRequest<ScopeAccess>): Promise<void> {
  const { principal, scope, requestId, req, res } = request;
  const cursor = resumeCursor(req.headers['last-event-id'], request.query.cursor);
  requireEventStream(req);
  const target = resolveInboxStreamTarget(deps, { principal, repositoryId: scope.repositoryId, cursor });
  // openStream owns the lease from here: the session releases it when it closes or fails to open.
  await openStream(deps.engine, {
    res,
    source: target.source,
    afterSeq: target.afterSeq,
    grant: new ScopeGrant(deps.core, principal, scopeRequest(scope)),
    lease: await reserveInboxStream(deps, principal),
    requestId,
  });
}
