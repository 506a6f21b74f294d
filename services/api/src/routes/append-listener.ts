import type { RequestListener } from 'node:http';
import {
  accessLog,
  asPlainRoute,
  assignRequestId,
  authenticate,
  authorize,
  isPlainJsonRequest,
  matchPlainRoute,
  parseScope,
  readJsonBody,
  runMiddleware,
  writeError,
  writeJson,
  type Middleware,
} from '@chat/http-kit';
import type { Response } from 'express';
import type { ApiDeps } from '../deps.ts';
import { handleAppend } from './append.handler.ts';
import { BRANCH_ROOM, REPOSITORY_ROOM } from './rooms.routes.ts';

/** The append routes in the exact form clients send them (no percent-escapes, the routes' spelling). */
const APPEND_ROUTES = [
  { pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/room\/messages\/?$/, path: `${REPOSITORY_ROOM}/messages` },
  { pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/branches\/(?<branchId>[0-9A-Za-z]+)\/room\/messages\/?$/, path: `${BRANCH_ROOM}/messages` },
] as const;

/**
 * The API's request listener. Appends, the hot path, are served on Node's own request and response
 * when they are plain (see `isPlainJsonRequest`): the same steps as the express route, in the same
 * order (access log, request ID, token, scope, live write authorization, body, handler), the same
 * http-kit middleware and the same error writer, without express's per-request cost. Everything
 * else, odd appends included, goes to `app`.
 */
export function createApiListener(deps: ApiDeps, app: RequestListener): RequestListener {
  const steps: Middleware[] = [
    accessLog(deps.logger, deps.metrics.httpDuration),
    assignRequestId,
    authenticate(deps.tokens),
    parseScope,
    authorize(deps.core, 'write'),
  ];
  return (req, res) => {
    // A query string is allowed (and ignored) on the express route as well.
    const match = req.method === 'POST' ? matchPlainRoute(req.url ?? '', APPEND_ROUTES) : undefined;
    if (!match || !isPlainJsonRequest(req, deps.limits.bodyLimitBytes)) {
      app(req, res);
      return;
    }
    const plain = asPlainRoute(req, res, { path: match.route.path, params: match.params });
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
}
