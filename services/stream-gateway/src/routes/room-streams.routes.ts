import { roomScopeKey } from '@chat/store';
import { Router, type Request, type Response } from 'express';
import type { ServerResponse } from 'node:http';
import type { GatewayDeps } from '../deps.ts';
import { resolveRoomStreamTarget } from '../domain/open-room-stream.ts';
import { resumeCursor } from '../domain/resume-input.ts';
import { principalKey, ScopeGrant } from '../domain/scope-grant.ts';
import { openStream } from '../domain/stream-engine.ts';
import type { StreamLease } from '@chat/coordination';
import { accessLog, assignRequestId, authenticate, authorize, errorHandler, methodNotAllowed, parseScope } from '@chat/http-kit';
import { requireEventStream, scopeRequest } from '../middleware/event-stream.ts';
import { streamRequestOf } from './express-stream-request.ts';
import type { StreamRequest } from './stream-request.ts';

/** streamRepositoryRoom and streamBranchRoom. */
export const ROOM_STREAM_PATHS = [
  '/v1/repositories/:repositoryId/room/events',
  '/v1/repositories/:repositoryId/branches/:branchId/room/events',
] as const;

/**
 * The room stream routes, self-contained (request ID, envelope errors), so the same router serves
 * the all-in-one process (the standalone gateway takes GETs through `stream-listener.ts` and the rest
 * here). Order: request ID, token, scope, live read authorization, then resume input and Accept, then
 * the room, the stream cap, and the stream.
 */
export function createStreamRouter(deps: GatewayDeps): Router {
  const router = Router();
  for (const path of ROOM_STREAM_PATHS) {
    router
      .route(path)
      .get(accessLog(deps.logger, deps.engine.metrics.httpDuration), assignRequestId, authenticate(deps.tokens), parseScope, authorize(deps.core, 'read'), (req: Request, res: Response) =>
        streamRoom(deps, streamRequestOf(req, res), res),
      )
      .all(accessLog(deps.logger, deps.engine.metrics.httpDuration), assignRequestId, methodNotAllowed('GET'));
  }
  router.use(ROOM_STREAM_PATHS as unknown as string[], errorHandler(deps.logger));
  return router;
}

/** Opens a room stream for an authenticated, authorized request. @throws AppError before anything was written. */
export async function streamRoom(deps: GatewayDeps, req: StreamRequest, res: ServerResponse): Promise<void> {
  const { principal, scope, access, requestId } = req;
  const cursor = resumeCursor(req.lastEventId, req.cursorQuery);
  requireEventStream(req.accept);
  let lease: StreamLease | undefined;
  try {
    const target = await resolveRoomStreamTarget(deps, {
      scope,
      scopeSealed: access.scopeState === 'sealed',
      cursor,
      reserve: async () => {
        lease = await deps.leases.acquire({ principalKey: principalKey(principal), roomKey: roomScopeKey(scope) });
      },
    });
    const held = lease!;
    lease = undefined; // from here the session owns it
    await openStream(deps.engine, {
      res,
      source: target.source,
      afterSeq: target.afterSeq,
      grant: new ScopeGrant(deps.core, principal, scopeRequest(scope)),
      lease: held,
      requestId,
    });
  } finally {
    if (lease) await lease.release().catch((err: unknown) => deps.logger.warn({ err }, 'stream lease release failed'));
  }
}
