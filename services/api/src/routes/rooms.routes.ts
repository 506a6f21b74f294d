import { Router } from 'express';
import { authenticate, authorize, methodNotAllowed, parseScope } from '@chat/http-kit';
import type { ApiDeps } from '../deps.ts';
import { getRoom } from '../domain/get-room.ts';
import { parseHistoryAnchor } from '../domain/history-query.ts';
import { listMessageHistory } from '../domain/list-message-history.ts';
import { listMessages } from '../domain/list-messages.ts';
import { parseCursorParam, parseLimit } from '../domain/page-query.ts';
import { jsonBody } from '../middleware/json-body.ts';
import { appendHandler } from './append.handler.ts';

export const REPOSITORY_ROOM = '/v1/repositories/:repositoryId/room';
export const BRANCH_ROOM = '/v1/repositories/:repositoryId/branches/:branchId/room';

/** Room metadata, message lists, history reads and appends, for repository rooms and branch rooms alike. */
export function roomsRouter(deps: ApiDeps): Router {
  const router = Router();
  const read = [authenticate(deps.tokens), parseScope, authorize(deps.core, 'read')];
  const write = [authenticate(deps.tokens), parseScope, authorize(deps.core, 'write')];

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

    // Extension: the room read from its newest message, or before, after or at a message.
    router
      .route(`${room}/history`)
      .get(...read, async (req, res) => {
        const { scope, access } = res.locals;
        const limit = parseLimit(req.query.limit);
        const anchor = parseHistoryAnchor(req.query);
        res.json(await listMessageHistory(deps, { scope, scopeSealed: access.scopeState === 'sealed', limit, anchor }));
      })
      .all(methodNotAllowed('GET'));
  }
  return router;
}
