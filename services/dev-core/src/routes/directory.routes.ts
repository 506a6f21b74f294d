import type { PublicRoute } from '@chat/http-kit';
import { z } from 'zod';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { listRoomReaders, MEMBERS_READ_SCOPE } from '../domain/member-directory.ts';
import { appTokenOf } from './app-token.ts';
import { allowAppOrigin, appPreflight } from './cors.ts';
import { CoreRefusalError, invalid } from './http-errors.ts';

const DIRECTORY_PATH = '/api/repositories/:repositoryId/readers';

/** The query: a branch room names its branch once; anything else is refused rather than ignored. */
const directoryQuerySchema = z.strictObject({ branchId: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a canonical ULID').optional() });

/**
 * `GET /api/repositories/{repositoryId}/readers[?branchId=…]` (docs/core-contract.md section 4): the
 * people and bots who may read a room, for a marketplace app's mention picker. Authorized by the
 * human's core resource token with scope `core:members:read`; the human must read the repository.
 */
export function directoryRoutes(ctx: DevCoreContext): PublicRoute[] {
  return [
    { method: 'OPTIONS', path: DIRECTORY_PATH, access: 'public', handle: appPreflight(ctx.store, 'GET') },
    {
      method: 'GET',
      path: DIRECTORY_PATH,
      access: 'public',
      handle: async ({ req, res, params, query }) => {
        allowAppOrigin(ctx.store, req, res);
        const token = await appTokenOf(ctx, req, res, MEMBERS_READ_SCOPE);
        const parsed = directoryQuerySchema.safeParse(query);
        if (!parsed.success) throw invalid('directory query', parsed.error);
        const readers = listRoomReaders(ctx.store, { repositoryId: params['repositoryId']!, branchId: parsed.data.branchId }, token.subjectId);
        // Unknown and unreadable look alike, so the directory tells nobody which repositories exist.
        if (readers === undefined) throw new CoreRefusalError(404, 'repository_not_found', 'no such repository');
        return { status: 200, body: { readers } };
      },
    },
  ];
}
