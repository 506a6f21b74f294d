import { Router } from 'express';
import { COMMIT_READ_SCOPE, commitLookupBodySchema, lookUpCommits } from '../domain/commit-lookup.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { appResourceToken } from '../domain/resource-token.ts';
import { registeredAppCors } from './cors.ts';
import { sendError } from './http-errors.ts';

const LOOKUP_PATH = '/api/repositories/:repositoryId/commits/lookup';

/**
 * `POST /api/repositories/{repositoryId}/commits/lookup` (docs/core-contract.md section 4): which
 * hexadecimal candidates name a commit of the repository. Authorized by the human's core resource
 * token (audience `core`, scope `core:commits:read`), never by a chat token: a token is accepted only
 * by the API its audience names.
 */
export function commitLookupRoutes(ctx: DevCoreContext): Router {
  const router = Router();
  router.options(LOOKUP_PATH, registeredAppCors(ctx.store));
  router.post(LOOKUP_PATH, registeredAppCors(ctx.store), async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const token = await appResourceToken(ctx, req.headers.authorization ?? '', COMMIT_READ_SCOPE);
    // Forged, expired, revoked, another kind, lacking the scope, or its app uninstalled: one refusal.
    if (token === undefined) {
      res.setHeader('WWW-Authenticate', `Bearer scope="${COMMIT_READ_SCOPE}"`);
      sendError(res, 401, 'token_rejected', 'a core token with scope core:commits:read is required');
      return;
    }
    const body = commitLookupBodySchema.safeParse(req.body);
    if (!body.success) {
      sendError(res, 400, 'request_invalid', 'commit look-up invalid', { issues: body.error.issues });
      return;
    }
    const repository = ctx.store.findRepository(String(req.params['repositoryId']));
    // Unknown and unreadable look alike, so the look-up tells nobody which repositories exist.
    if (repository === undefined || !Object.hasOwn(repository.members, token.subjectId)) {
      sendError(res, 404, 'repository_not_found', 'no such repository');
      return;
    }
    res.json({ results: lookUpCommits(repository.commits ?? [], body.data.candidates) });
  });
  return router;
}
