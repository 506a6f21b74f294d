import type { PrincipalAccess } from '@chat/authz-client';
import { AppError } from '@chat/contracts';
import type { AuthorizedRequest } from '@chat/http-kit';
import type { GatewayDeps } from '../deps.ts';
import { FeedGrant } from '../domain/feed-grant.ts';
import { reserveInboxStream } from '../domain/open-inbox-stream.ts';
import { resolvePrincipalInboxTarget } from '../domain/open-principal-inbox-stream.ts';
import { resumeCursor } from '../domain/resume-input.ts';
import { openStream } from '../domain/stream-engine.ts';
import { requireEventStream } from './event-stream.ts';

/**
 * streamPrincipalInbox, once the pipeline verified the caller and asked core which repositories it
 * may read: the resume input and Accept, the caller's feed and where the stream starts, one of the
 * caller's inbox-stream slots, then the stream, which sends the notifications of the readable
 * repositories and rechecks that set periodically (its {@link FeedGrant}).
 * @throws AppError before anything was written.
 */
export async function streamPrincipalInbox(deps: GatewayDeps, request: AuthorizedRequest<PrincipalAccess>): Promise<void> {
  const { principal, readable, requestId, req, res } = request;
  const cursor = resumeCursor(req.headers['last-event-id'], request.query.cursor);
  const includeMessage = includeOf(request.query.include);
  requireEventStream(req);
  const target = await resolvePrincipalInboxTarget(deps, { principal, cursor, includeMessage });
  const grant = new FeedGrant(deps.core, principal, readable);
  // openStream owns the lease from here: the session releases it when it closes or fails to open.
  await openStream(deps.engine, {
    res,
    source: target.source,
    afterSeq: target.afterSeq,
    grant,
    filter: grant,
    lease: await reserveInboxStream(deps, principal),
    requestId,
  });
}

/** `include=message`: each notification comes with its message. Nothing else may be asked for. */
function includeOf(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (value === 'message') return true;
  throw new AppError('REQUEST_INVALID', 'include: the only value is `message`.');
}
