import { Router } from 'express';
import type { ApiDeps } from '../deps.ts';
import { getRoom } from '../domain/get-room.ts';
import { listMessages } from '../domain/list-messages.ts';
import { parseCursorParam, parseLimit } from '../domain/page-query.ts';
import { authenticate, parseScope } from '../middleware/authenticate.ts';
import { authorize } from '../middleware/authorize.ts';
import { jsonBody } from '../middleware/json-body.ts';
import { methodNotAllowed } from '../middleware/method-not-allowed.ts';
import { appendHandler } from './append.handler.ts';

const REPOSITORY_ROOM = '/v1/repositories/:repositoryId/room';
const BRANCH_ROOM = '/v1/repositories/:repositoryId/branches/:branchId/room';

/** Room metadata, message lists and appends, for repository rooms and branch rooms alike. */
export function roomsRouter(deps: ApiDeps): Router {
  const router = Router();
  const read = [authenticate(deps), parseScope, authorize(deps, 'read')];
  const write = [authenticate(deps), parseScope, authorize(deps, 'write')];

  for (const room of [REPOSITORY_ROOM, BRANCH_ROOM]) {
    router
      .route(room)
      .get(...read, async (_req, res) => {
        const { scope, access } = res.locals;
        res.json(await getRoom(deps, { scope, scopeSealed: access.scopeState === 'sealed' }));
      })
      .all(methodNotAllowed('GET'));

    router
      .route(`${room}/messages`)
      .get(...read, async (req, res) => {
        const { scope, access } = res.locals;
        const limit = parseLimit(req.query.limit);
        const cursor = parseCursorParam(req.query.cursor);
        res.json(await listMessages(deps, { scope, scopeSealed: access.scopeState === 'sealed', limit, cursor }));
      })
      .post(...write, jsonBody(deps.limits.bodyLimitBytes), appendHandler(deps))
      .all(methodNotAllowed('GET, POST'));
  }
  return router;
}
