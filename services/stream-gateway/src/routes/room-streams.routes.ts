import { roomScopeKey } from '@chat/store';
import { Router, type Request, type Response } from 'express';
import type { GatewayDeps } from '../deps.ts';
import { resolveRoomStreamTarget } from '../domain/open-room-stream.ts';
import { resumeCursor } from '../domain/resume-input.ts';
import { principalKey, scopeGrant } from '../domain/scope-grant.ts';
import { openStream } from '../domain/stream-engine.ts';
import type { StreamLease } from '@chat/coordination';
import { accessLog, assignRequestId, authenticate, authorize, errorHandler, methodNotAllowed, parseScope } from '@chat/http-kit';
import { requireEventStream, scopeRequest } from '../middleware/event-stream.ts';

/** streamRepositoryRoom and streamBranchRoom. */
export const ROOM_STREAM_PATHS = [
  '/v1/repositories/:repositoryId/room/events',
  '/v1/repositories/:repositoryId/branches/:branchId/room/events',
] as const;

/**
 * The room stream routes, self-contained (request ID, envelope errors), so the same router serves
 * the standalone gateway and the all-in-one process. Order: request ID, token, scope, live read
 * authorization, then resume input and Accept, then the room, the stream cap, and the stream.
 */
export function createStreamRouter(deps: GatewayDeps): Router {
  const router = Router();
  for (const path of ROOM_STREAM_PATHS) {
    router
      .route(path)
      .get(accessLog(deps.logger, deps.engine.metrics.httpDuration), assignRequestId, authenticate(deps.tokens), parseScope, authorize(deps.core, 'read'), (req, res) => streamRoom(deps, req, res))
      .all(accessLog(deps.logger, deps.engine.metrics.httpDuration), assignRequestId, methodNotAllowed('GET'));
  }
  router.use(ROOM_STREAM_PATHS as unknown as string[], errorHandler(deps.logger));
  return router;
}

async function streamRoom(deps: GatewayDeps, req: Request, res: Response): Promise<void> {
  const { principal, scope, access, requestId: id } = res.locals;
  const cursor = resumeCursor(req.headers['last-event-id'], req.query.cursor);
  requireEventStream(req);
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
      grant: scopeGrant(deps.core, principal, scopeRequest(scope)),
      lease: held,
      requestId: id,
    });
  } finally {
    if (lease) await lease.release().catch((err: unknown) => deps.logger.warn({ err }, 'stream lease release failed'));
  }
}
