import type { IncomingMessage, RequestListener } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import {
  accessLog,
  asPlainRoute,
  assignRequestId,
  authenticate,
  authorize,
  matchPlainRoute,
  parseScope,
  runMiddleware,
  writeError,
  type Middleware,
  type PlainRequest,
  type PlainResponse,
} from '@chat/http-kit';
import type { Response } from 'express';
import type { GatewayDeps } from '../deps.ts';
import { INBOX_STREAM_PATH, streamInbox } from './inbox-streams.routes.ts';
import { ROOM_STREAM_PATHS, streamRoom } from './room-streams.routes.ts';

/**
 * The stream GETs in the exact form clients send them (no percent-escapes, the spelling of the
 * routes): anything else, and every other method, goes to express, which answers it as before.
 */
const STREAM_ROUTES = [
  { pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/room\/events\/?$/, path: ROOM_STREAM_PATHS[0], open: streamRoom },
  { pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/branches\/(?<branchId>[0-9A-Za-z]+)\/room\/events\/?$/, path: ROOM_STREAM_PATHS[1], open: streamRoom },
  { pattern: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/inbox\/events\/?$/, path: INBOX_STREAM_PATH, open: streamInbox },
] as const;

/** A headers object for requests whose stream is open: nothing reads them any more. */
const NO_HEADERS: IncomingMessage['headers'] = Object.freeze({});
const NO_RAW_HEADERS: string[] = Object.freeze([]) as unknown as string[];

/**
 * The standalone gateway's request listener: stream GETs are served on Node's own request and
 * response, everything else by `app`. Express gives every request it routes its own prototype
 * (a hidden class per response in V8), router closures, `params`, `query` and `locals`, all held
 * for as long as the stream is open; here a held stream keeps only Node's objects and the session.
 * The pipeline is the express route's, step for step and with the same http-kit middleware:
 * access log, request ID, token, scope, live read authorization, then the route's handler.
 */
export function createStreamListener(deps: GatewayDeps, app: RequestListener): RequestListener {
  const steps: Middleware[] = [
    accessLog(deps.logger, deps.engine.metrics.httpDuration),
    assignRequestId,
    authenticate(deps.tokens),
    parseScope,
    authorize(deps.core, 'read'),
  ];
  return (req, res) => {
    const match = req.method === 'GET' ? matchPlainRoute(req.url ?? '', STREAM_ROUTES) : undefined;
    if (!match) {
      app(req, res);
      return;
    }
    const plain = asPlainRoute(req, res, { path: match.route.path, params: match.params });
    void serveStream(deps, steps, { open: match.route.open, query: match.query }, plain.req, plain.res);
  };
}

async function serveStream(
  deps: GatewayDeps,
  steps: Middleware[],
  route: { open: (typeof STREAM_ROUTES)[number]['open']; query: string },
  req: PlainRequest,
  res: PlainResponse,
): Promise<void> {
  try {
    for (const step of steps) await runMiddleware(step, req, res);
    const { principal, scope, access, requestId } = res.locals as unknown as Response['locals'];
    const query = parseQuery(route.query);
    await route.open(deps, { requestId, principal, scope, access, lastEventId: req.headers['last-event-id'], cursorQuery: query.cursor, accept: req.headers.accept }, res);
    if (res.headersSent) {
      // The stream is open and nothing reads the request's headers again; the bearer token is
      // among them, and holding it for the stream's whole life helps no one.
      req.headers = NO_HEADERS;
      req.rawHeaders = NO_RAW_HEADERS;
    }
  } catch (err) {
    writeError(deps.logger, req, res, err);
  }
}
