import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import {
  accessLog,
  asPlainRoute,
  assignRequestId,
  authenticate,
  authorize,
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
import type { StreamRequest } from './stream-request.ts';

/**
 * The stream GETs in the exact form clients send them (no percent-escapes, the spelling of the
 * routes): anything else, and every other method, goes to express, which answers it as before.
 */
const STREAM_ROUTES = [
  { pattern: /^\/v1\/repositories\/([0-9A-Za-z]+)\/room\/events\/?$/, path: ROOM_STREAM_PATHS[0], open: streamRoom },
  { pattern: /^\/v1\/repositories\/([0-9A-Za-z]+)\/branches\/([0-9A-Za-z]+)\/room\/events\/?$/, path: ROOM_STREAM_PATHS[1], open: streamRoom },
  { pattern: /^\/v1\/repositories\/([0-9A-Za-z]+)\/inbox\/events\/?$/, path: INBOX_STREAM_PATH, open: streamInbox },
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
    const route = req.method === 'GET' ? matchStreamRoute(req.url ?? '') : undefined;
    if (!route) {
      app(req, res);
      return;
    }
    const plain = asPlainRoute(req, res, route);
    void serveStream(deps, steps, route, plain.req, plain.res);
  };
}

interface MatchedRoute {
  path: string;
  params: Record<string, string>;
  query: string;
  open: (deps: GatewayDeps, req: StreamRequest, res: ServerResponse) => Promise<void>;
}

function matchStreamRoute(url: string): MatchedRoute | undefined {
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  for (const route of STREAM_ROUTES) {
    const m = route.pattern.exec(pathname);
    if (!m) continue;
    const params: Record<string, string> = { repositoryId: m[1]! };
    if (m[2] !== undefined) params.branchId = m[2];
    return { path: route.path, params, query: q === -1 ? '' : url.slice(q + 1), open: route.open };
  }
  return undefined;
}

async function serveStream(deps: GatewayDeps, steps: Middleware[], route: MatchedRoute, req: PlainRequest, res: PlainResponse): Promise<void> {
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
