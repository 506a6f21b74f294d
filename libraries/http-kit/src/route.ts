import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { Logger } from '@chat/observability';
import type { Histogram } from 'prom-client';

/** What every handler is given: the request, its ID and logger, its path parameters and query. */
export interface RouteRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The client's well-formed `X-Request-Id`, or a ULID. */
  requestId: string;
  /** The process logger bound to `requestId`. */
  log: Logger;
  /** Path parameters, percent-decoded. */
  params: Record<string, string>;
  /** The query string, parsed (a repeated name is an array). */
  query: ParsedUrlQuery;
}

/**
 * A scoped route's request once its service's access control let it through: what the control
 * decided (for chat's routes: the principal, the room scope and core's decision), and the JSON body
 * on routes that declare one.
 */
export type AuthorizedRequest<A> = RouteRequest & A & { body: unknown };

/**
 * A service's access control for its scoped routes: it runs after the route is found and before the
 * body is read, and throws (an AppError) to refuse.
 */
export interface AccessControl<A> {
  decide(request: { headers: IncomingHttpHeaders; params: Record<string, string>; requestId: string }, action: 'read' | 'write'): Promise<A>;
}

/**
 * What a handler answers: a status and a JSON body, which the pipeline writes; or nothing, when the
 * handler wrote the response itself (a stream, a file).
 */
export type RouteAnswer = { status: number; body: unknown } | void;

interface RouteBase {
  /** GET routes answer HEAD too; OPTIONS is for a CORS preflight a service answers itself. */
  method: 'GET' | 'POST' | 'PUT' | 'OPTIONS';
  /** The path template, `:name` for a parameter; also the operation's name in logs and metrics. */
  path: string;
}

/** A route anyone may call: the viewer's page, the OpenAPI document, a health check. */
export interface PublicRoute extends RouteBase {
  access: 'public';
  handle(request: RouteRequest): RouteAnswer | Promise<RouteAnswer>;
}

/** A route its service's access control decides on, for `access`, before the body is read. */
export interface ScopedRoute<A = unknown> extends RouteBase {
  access: 'read' | 'write';
  /** The request carries a JSON body (`application/json`, UTF-8, at most the table's limit). */
  body?: 'json';
  /**
   * The route answers with an event stream and keeps the connection: the gateway's front may serve
   * it straight off the socket (see the stream gateway's `stream-front.ts`).
   */
  stream?: boolean;
  handle(request: AuthorizedRequest<A>): RouteAnswer | Promise<RouteAnswer>;
}

export type Route<A = unknown> = PublicRoute | ScopedRoute<A>;

/** What the pipeline needs of the service that owns a table. */
export interface RouteServices<A = unknown> {
  logger: Logger;
  /** One sample per request, labelled with the route template, method and status. */
  httpDuration: Histogram<'operation' | 'method' | 'status'>;
  /** Decides on the table's scoped routes (needed when it has any). */
  access?: AccessControl<A>;
  /** Largest JSON body a scoped route reads. @defaultValue 64 KiB */
  bodyLimitBytes?: number;
}

/** One service's routes, each declared once, with what the pipeline needs to serve them. */
export interface RouteTable<A = unknown> {
  /** The service's name, for error messages. */
  service: string;
  routes: readonly Route<A>[];
  services: RouteServices<A>;
  /**
   * What a malformed `X-Request-Id` gets: `refuse` answers 400 `REQUEST_ID_INVALID` (the API's rule);
   * `replace` answers under a new ID (a page's files are worth no 400). @defaultValue 'refuse'
   */
  malformedRequestId?: 'refuse' | 'replace';
}
