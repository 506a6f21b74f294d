import type { PublicRoute } from '@chat/http-kit';
import { COMMIT_READ_SCOPE, commitLookupBodySchema, lookUpCommits } from '../domain/commit-lookup.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { appTokenOf } from './app-token.ts';
import { allowAppOrigin, appPreflight } from './cors.ts';
import { CoreRefusalError, invalid } from './http-errors.ts';
import { readJson } from './request-body.ts';

const LOOKUP_PATH = '/api/repositories/:repositoryId/commits/lookup';

/**
 * `POST /api/repositories/{repositoryId}/commits/lookup` (docs/core-contract.md section 4): which
 * hexadecimal candidates name a commit of the repository. Authorized by the human's core resource
 * token (audience `core`, scope `core:commits:read`), never by a chat token: a token is accepted only
 * by the API its audience names. An app's page calls it, hence the CORS preflight.
 */
export function commitLookupRoutes(ctx: DevCoreContext): PublicRoute[] {
  return [
    { method: 'OPTIONS', path: LOOKUP_PATH, access: 'public', handle: appPreflight(ctx.store, 'POST') },
    {
      method: 'POST',
      path: LOOKUP_PATH,
      access: 'public',
      handle: async ({ req, res, params }) => {
        allowAppOrigin(ctx.store, req, res);
        const token = await appTokenOf(ctx, req, res, COMMIT_READ_SCOPE);
        const body = commitLookupBodySchema.safeParse(await readJson(req));
        if (!body.success) throw invalid('commit look-up', body.error);
        const repository = ctx.store.findRepository(params['repositoryId']!);
        // Unknown and unreadable look alike, so the look-up tells nobody which repositories exist.
        if (repository === undefined || !Object.hasOwn(repository.members, token.subjectId)) {
          throw new CoreRefusalError(404, 'repository_not_found', 'no such repository');
        }
        return { status: 200, body: { results: lookUpCommits(repository.commits ?? [], body.data.candidates) } };
      },
    },
  ];
}
