import { Router } from 'express';
import { authenticate, authorize, methodNotAllowed, parseScope } from '@chat/http-kit';
import type { ApiDeps } from '../deps.ts';
import { acknowledgeInbox } from '../domain/acknowledge-inbox.ts';
import { inboxOwnerOf, listInbox } from '../domain/list-inbox.ts';
import { parseCursorParam, parseLimit } from '../domain/page-query.ts';
import { jsonBody } from '../middleware/json-body.ts';

const INBOX = '/v1/repositories/:repositoryId/inbox';

/** The caller's mention inbox in a repository: list, and acknowledge through a cursor. */
export function inboxRouter(deps: ApiDeps): Router {
  const router = Router();
  // Read access to the repository is what a principal needs for its own inbox there.
  const read = [authenticate(deps.tokens), parseScope, authorize(deps.core, 'read')];

  router
    .route(INBOX)
    .get(...read, async (req, res) => {
      const { principal, scope } = res.locals;
      const limit = parseLimit(req.query.limit);
      const cursor = parseCursorParam(req.query.cursor);
      res.json(await listInbox(deps, { owner: inboxOwnerOf(principal, scope.repositoryId), limit, cursor }));
    })
    .all(methodNotAllowed('GET'));

  router
    .route(`${INBOX}/acknowledgements`)
    .post(...read, jsonBody(deps.limits.bodyLimitBytes), async (req, res) => {
      const { principal, scope } = res.locals;
      res.json(await acknowledgeInbox(deps, { owner: inboxOwnerOf(principal, scope.repositoryId), body: req.body }));
    })
    .all(methodNotAllowed('POST'));
  return router;
}
