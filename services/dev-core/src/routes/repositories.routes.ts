import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { MEMBERS_READ_SCOPE } from '../domain/member-directory.ts';
import { listReadableRepositories, resolveBranchName } from '../domain/repository-listing.ts';
import { appResourceToken, type ResourceTokenIdentity } from '../domain/resource-token.ts';
import { registeredAppCors } from './cors.ts';
import { sendError } from './http-errors.ts';

const LIST_PATH = '/api/user/repositories';
const LOOKUP_PATH = '/api/repositories/:repositoryId/branches/lookup';

/** The look-up's query: one branch name, nothing else (a second `name` is refused rather than guessed between). */
const lookupQuerySchema = z.strictObject({ name: z.string().min(1).max(255) });

/** The person a request's core resource token speaks for, or undefined after answering the refusal. */
async function reader(ctx: DevCoreContext, req: Request, res: Response): Promise<ResourceTokenIdentity | undefined> {
  res.setHeader('Cache-Control', 'no-store');
  const token = await appResourceToken(ctx, req.headers.authorization ?? '', MEMBERS_READ_SCOPE);
  if (token === undefined) {
    res.setHeader('WWW-Authenticate', `Bearer scope="${MEMBERS_READ_SCOPE}"`);
    sendError(res, 401, 'token_rejected', `a core token with scope ${MEMBERS_READ_SCOPE} is required`);
  }
  return token;
}

/**
 * `GET /api/user/repositories` and `GET /api/repositories/{repositoryId}/branches/lookup?name=…`
 * (docs/core-contract.md section 4): the repositories a person can read with their branches by name,
 * and a branch name resolved to its ID, for a marketplace app's room list and its links by name.
 * Authorized like the member directory: the human's core resource token with `core:members:read`.
 */
export function repositoriesRoutes(ctx: DevCoreContext): Router {
  const router = Router();
  router.options([LIST_PATH, LOOKUP_PATH], registeredAppCors(ctx.store, 'GET'));
  router.get(LIST_PATH, registeredAppCors(ctx.store, 'GET'), async (req, res) => {
    const token = await reader(ctx, req, res);
    if (token === undefined) return;
    if (Object.keys(req.query).length > 0) {
      sendError(res, 400, 'request_invalid', 'this endpoint takes no query');
      return;
    }
    res.json({ repositories: listReadableRepositories(ctx.store, token.subjectId) });
  });
  router.get(LOOKUP_PATH, registeredAppCors(ctx.store, 'GET'), async (req, res) => {
    const token = await reader(ctx, req, res);
    if (token === undefined) return;
    const query = lookupQuerySchema.safeParse(req.query);
    if (!query.success) {
      sendError(res, 400, 'request_invalid', 'branch look-up query invalid', { issues: query.error.issues });
      return;
    }
    const branch = resolveBranchName(ctx.store, String(req.params['repositoryId']), query.data.name, token.subjectId);
    if (branch === 'repository_not_found') sendError(res, 404, branch, 'no such repository');
    else if (branch === 'branch_not_found') sendError(res, 404, branch, 'no branch of that name');
    else res.json({ branch });
  });
  return router;
}
