import type { PublicRoute } from '@chat/http-kit';
import { z } from 'zod';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { MEMBERS_READ_SCOPE } from '../domain/member-directory.ts';
import { listReadableRepositories, resolveBranchName } from '../domain/repository-listing.ts';
import { appTokenOf } from './app-token.ts';
import { allowAppOrigin, appPreflight } from './cors.ts';
import { CoreRefusalError, invalid } from './http-errors.ts';

const LIST_PATH = '/api/user/repositories';
const LOOKUP_PATH = '/api/repositories/:repositoryId/branches/lookup';

/** The look-up's query: one branch name, nothing else (a second `name` is refused rather than guessed between). */
const lookupQuerySchema = z.strictObject({ name: z.string().min(1).max(255) });

/**
 * `GET /api/user/repositories` and `GET /api/repositories/{repositoryId}/branches/lookup?name=…`
 * (docs/core-contract.md section 4): the repositories a person can read with their branches by name,
 * and a branch name resolved to its ID, for a marketplace app's room list and its links by name.
 * Authorized like the member directory: the human's core resource token with `core:members:read`.
 */
export function repositoriesRoutes(ctx: DevCoreContext): PublicRoute[] {
  return [
    { method: 'OPTIONS', path: LIST_PATH, access: 'public', handle: appPreflight(ctx.store, 'GET') },
    {
      method: 'GET',
      path: LIST_PATH,
      access: 'public',
      handle: async ({ req, res, query }) => {
        allowAppOrigin(ctx.store, req, res);
        const token = await appTokenOf(ctx, req, res, MEMBERS_READ_SCOPE);
        if (Object.keys(query).length > 0) throw new CoreRefusalError(400, 'request_invalid', 'this endpoint takes no query');
        return { status: 200, body: { repositories: listReadableRepositories(ctx.store, token.subjectId) } };
      },
    },
    { method: 'OPTIONS', path: LOOKUP_PATH, access: 'public', handle: appPreflight(ctx.store, 'GET') },
    {
      method: 'GET',
      path: LOOKUP_PATH,
      access: 'public',
      handle: async ({ req, res, params, query }) => {
        allowAppOrigin(ctx.store, req, res);
        const token = await appTokenOf(ctx, req, res, MEMBERS_READ_SCOPE);
        const parsed = lookupQuerySchema.safeParse(query);
        if (!parsed.success) throw invalid('branch look-up query', parsed.error);
        const branch = resolveBranchName(ctx.store, params['repositoryId']!, parsed.data.name, token.subjectId);
        if (branch === 'repository_not_found') throw new CoreRefusalError(404, branch, 'no such repository');
        if (branch === 'branch_not_found') throw new CoreRefusalError(404, branch, 'no branch of that name');
        return { status: 200, body: { branch } };
      },
    },
  ];
}
