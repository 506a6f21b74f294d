import type { IncomingMessage } from 'node:http';
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
  type FastRoute,
  type Middleware,
  type PlainRequest,
  type PlainResponse,
} from '@chat/http-kit';
import type { Response } from 'express';
import type { GatewayDeps } from '../deps.ts';
import { INBOX_STREAM_PATH, streamInbox } from './inbox-streams.routes.ts';
import { ROOM_STREAM_PATHS, streamRoom } from './room-streams.routes.ts';

/** A headers object for requests whose stream is open: nothing reads them any more. */
const NO_HEADERS: IncomingMessage['headers'] = Object.freeze({});
const NO_RAW_HEADERS: string[] = Object.freeze([]) as unknown as string[];

type OpenStream = typeof streamRoom | typeof streamInbox;

/** The paths of the stream GETs, exactly as clients spell them (no percent-escapes). */
export const STREAM_ROUTE_PATTERNS = {
  room: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/room\/events\/?$/,
  branchRoom: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/branches\/(?<branchId>[0-9A-Za-z]+)\/room\/events\/?$/,
  inbox: /^\/v1\/repositories\/(?<repositoryId>[0-9A-Za-z]+)\/inbox\/events\/?$/,
} as const;

/**
 * The stream GETs as fast routes of the process's HTTP entry, served on Node's own request and
 * response. Express gives every request it routes its own prototype (a hidden class per response in
 * V8), router closures, `params`, `query` and `locals`, all held for as long as the stream is open;
 * here a held stream keeps only Node's objects and the session. The pipeline is the express route's,
 * step for step and with the same http-kit middleware: access log, request ID, token, scope, live
 * read authorization, then the route's handler. Only the exact spelling clients send is matched (no
 * percent-escapes); anything else goes to express, which answers it the same way.
 */
export function streamFastRoutes(deps: GatewayDeps): FastRoute[] {
  const steps: Middleware[] = [
    accessLog(deps.logger, deps.engine.metrics.httpDuration),
    assignRequestId,
    authenticate(deps.tokens),
    parseScope,
    authorize(deps.core, 'read'),
  ];
  const route = (pattern: RegExp, path: string, open: OpenStream): FastRoute => ({
    method: 'GET',
    pattern,
    path,
    serve(req, res, match) {
      const plain = asPlainRoute(req, res, { path, params: match.params });
      void serveStream(deps, steps, { open, query: match.query }, plain.req, plain.res);
    },
  });
  return [
    route(STREAM_ROUTE_PATTERNS.room, ROOM_STREAM_PATHS[0], streamRoom),
    route(STREAM_ROUTE_PATTERNS.branchRoom, ROOM_STREAM_PATHS[1], streamRoom),
    route(STREAM_ROUTE_PATTERNS.inbox, INBOX_STREAM_PATH, streamInbox),
  ];
}

async function serveStream(
  deps: GatewayDeps,
  steps: Middleware[],
  route: { open: OpenStream; query: string },
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
      // Of the locals only what the access log reads when the stream closes stays: the request ID
      // (its line binds it then). The request's logger, the decision and the scope would otherwise
      // be held by every idle stream.
      res.locals = { requestId, accessLogged: true };
    }
  } catch (err) {
    writeError(deps.logger, req, res, err);
  }
}
