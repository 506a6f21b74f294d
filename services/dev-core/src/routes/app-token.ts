import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { appResourceToken, type ResourceTokenIdentity } from '../domain/resource-token.ts';
import { CoreRefusalError } from './http-errors.ts';

/**
 * The person the request's core resource token speaks for, on an app endpoint that needs `scope`.
 * Forged, expired, revoked, another kind, lacking the scope, or its app uninstalled: one refusal,
 * 401 `token_rejected` with `WWW-Authenticate` naming the scope.
 */
export async function appTokenOf(ctx: DevCoreContext, req: IncomingMessage, res: ServerResponse, scope: string): Promise<ResourceTokenIdentity> {
  const token = await appResourceToken(ctx, req.headers.authorization ?? '', scope);
  if (token !== undefined) return token;
  res.setHeader('WWW-Authenticate', `Bearer scope="${scope}"`);
  throw new CoreRefusalError(401, 'token_rejected', `a core token with scope ${scope} is required`);
}
