import {
  accessLog,
  asPlainRoute,
  assignRequestId,
  authenticate,
  authorize,
  isPlainJsonRequest,
  parseScope,
  readJsonBody,
  runMiddleware,
  writeError,
  writeJson,
  type FastRoute,
  type Middleware,
} from '@chat/http-kit';
import type { Response } from 'express';
import type { ApiDeps } from '../deps.ts';
import { handleAppend } from './append.handler.ts';
import { BRANCH_ROOM, REPOSITORY_ROOM } from './rooms.routes.ts';

/**
 * The append routes as fast routes of the process's HTTP entry: appends, the hot path, are served on
 * Node's own request and response when they are plain (see `isPlainJsonRequest`), with the same steps
 * as the express route, in the same order (access log, request ID, token, scope, live write
 * authorization, body, handler), the same http-kit middleware and the same error writer, without
 * express's per-request cost. Odd appends fall through to express. Only the exact spelling clients
 * send is matched (no percent-escapes); a query string is allowed and ignored, as on the express route.
 */
export function appendFastRoutes(deps: ApiDeps): FastRoute[] {
  const steps: Middleware[] = [
    accessLog(deps.logger, deps.metrics.httpDuration),
    assignRequestId,
    authenticate(deps.tokens),
    parseScope,
    authorize(deps.core, 'write'),
  ];
  const accepts = (req: Parameters<typeof isPlainJsonRequest>[0]) => isPlainJsonRequest(req, deps.limits.bodyLimitBytes);
  const serve = (path: string): FastRoute['serve'] => (req, res, match) => {
    const plain = asPlainRoute(req, res, { path, params: match.params });
    void (async () => {
      try {
        for (const step of steps) await runMiddleware(step, plain.req, plain.res);
        const body = await readJsonBody(req);
        const { status, message } = await handleAppend(deps, { locals: plain.res.locals as Response['locals'], headers: req.headers, body });
        writeJson(res, status, message);
      } catch (err) {
        writeError(deps.logger, plain.req, plain.res, err);
      }
    })();
  };
  return [
    { method: 'POST', pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/room\/messages\/?$/, path: `${REPOSITORY_ROOM}/messages`, accepts, serve: serve(`${REPOSITORY_ROOM}/messages`) },
    {
      method: 'POST',
      pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/branches\/(?<branchId>[0-9A-Za-z]+)\/room\/messages\/?$/,
      path: `${BRANCH_ROOM}/messages`,
      accepts,
      serve: serve(`${BRANCH_ROOM}/messages`),
    },
  ];
}
