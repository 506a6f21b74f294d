import { Router } from 'express';
import { z } from 'zod';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { listRoomReaders, MEMBERS_READ_SCOPE } from '../domain/member-directory.ts';
import { appResourceToken } from '../domain/resource-token.ts';
import { registeredAppCors } from './cors.ts';
import { sendError } from './http-errors.ts';

const DIRECTORY_PATH = '/api/repositories/:repositoryId/readers';

/** The query: a branch room names its branch once; anything else is refused rather than ignored. */
const directoryQuerySchema = z.strictObject({ branchId: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a canonical ULID').optional() });

/**
 * `GET /api/repositories/{repositoryId}/readers[?branchId=…]` (docs/core-contract.md section 4): the
 * people and bots who may read a room, for a marketplace app's mention picker. Authorized by the
 * human's core resource token with scope `core:members:read`; the human must read the repository.
 */
export function directoryRoutes(ctx: DevCoreContext): Router {
  const router = Router();
  router.options(DIRECTORY_PATH, registeredAppCors(ctx.store, 'GET'));
  router.get(DIRECTORY_PATH, registeredAppCors(ctx.store, 'GET'), async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const token = await appResourceToken(ctx, req.headers.authorization ?? '', MEMBERS_READ_SCOPE);
    if (token === undefined) {
      res.setHeader('WWW-Authenticate', `Bearer scope="${MEMBERS_READ_SCOPE}"`);
      sendError(res, 401, 'token_rejected', `a core token with scope ${MEMBERS_READ_SCOPE} is required`);
      return;
    }
    const query = directoryQuerySchema.safeParse(req.query);
    if (!query.success) {
      sendError(res, 400, 'request_invalid', 'directory query invalid', { issues: query.error.issues });
      return;
    }
    const readers = listRoomReaders(ctx.store, { repositoryId: String(req.params['repositoryId']), branchId: query.data.branchId }, token.subjectId);
    // Unknown and unreadable look alike, so the directory tells nobody which repositories exist.
    if (readers === undefined) {
      sendError(res, 404, 'repository_not_found', 'no such repository');
      return;
    }
    res.json({ readers });
  });
  return router;
}
