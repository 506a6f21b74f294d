import { Router, type Request, type Response } from 'express';
import type { ServerResponse } from 'node:http';
import type { GatewayDeps } from '../deps.ts';
import { reserveInboxStream, resolveInboxStreamTarget } from '../domain/open-inbox-stream.ts';
import { resumeCursor } from '../domain/resume-input.ts';
import { ScopeGrant } from '../domain/scope-grant.ts';
import { openStream } from '../domain/stream-engine.ts';
import { accessLog, assignRequestId, authenticate, authorize, errorHandler, methodNotAllowed, parseScope } from '@chat/http-kit';
import { requireEventStream, scopeRequest } from '../middleware/event-stream.ts';
import { streamRequestOf } from './express-stream-request.ts';
import type { StreamRequest } from './stream-request.ts';

/** streamRepositoryInbox. */
export const INBOX_STREAM_PATH = '/v1/repositories/:repositoryId/inbox/events';

/**
 * The inbox stream route, self-contained like the room streams. Order: request ID, token, scope, live
 * read authorization on the repository (what a principal needs for its own inbox there), then resume
 * input and Accept, then the caller's inbox-stream slot (`reserveInboxStream`), then the stream. No
 * materializing: an inbox never notified streams nothing until its first notification.
 */
export function createInboxStreamRouter(deps: GatewayDeps): Router {
  const router = Router();
  router
    .route(INBOX_STREAM_PATH)
    .get(accessLog(deps.logger, deps.engine.metrics.httpDuration), assignRequestId, authenticate(deps.tokens), parseScope, authorize(deps.core, 'read'), (req: Request, res: Response) =>
      streamInbox(deps, streamRequestOf(req, res), res),
    )
    .all(accessLog(deps.logger, deps.engine.metrics.httpDuration), assignRequestId, methodNotAllowed('GET'));
  router.use(INBOX_STREAM_PATH, errorHandler(deps.logger));
  return router;
}

/** Opens the caller's inbox stream for an authenticated, authorized request. @throws AppError before anything was written. */
export async function streamInbox(deps: GatewayDeps, req: StreamRequest, res: ServerResponse): Promise<void> {
  const { principal, scope, requestId } = req;
  const cursor = resumeCursor(req.lastEventId, req.cursorQuery);
  requireEventStream(req.accept);
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
