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
 * decided (for chat's room routes: the principal, the room scope and core's decision; for its
 * principal routes: the principal and the repositories it may read), and the JSON body on routes
 * that declare one.
 */
export type AuthorizedRequest<A> = RouteRequest & A & { body: unknown };

/** What an access control is shown of a request: its headers, its path parameters and its ID. */
export interface AccessRequest {
  headers: IncomingHttpHeaders;
  params: Record<string, string>;
  requestId: string;
  /**
   * To be told who the bearer token speaks for as soon as it is verified, before any decision: the
   * access log names the principal (its kind and ID only), refused requests included.
   */
  authenticated(principal: { kind: string; id: string }): void;
}

/**
 * A service's access control for its scoped routes: it runs after the route is found and before the
 * body is read, and throws (an AppError) to refuse. `decide` answers the `read` and `write` routes
 * (one room scope, named by the path); `decidePrincipal` the `principal` routes (the caller's own
 * data across repositories, no repository in the path), and is needed when a table has any.
 */
export interface AccessControl<A, P = unknown> {
  decide(request: AccessRequest, action: 'read' | 'write'): Promise<A>;
  decidePrincipal?(request: AccessRequest): Promise<P>;
}

/**
 * What a handler answers: a status and a JSON body, which the pipeline writes (a 204 without a
 * body); or nothing, when the handler wrote the response itself (a stream, a file).
 */
export type RouteAnswer = { status: number; body: unknown } | void;

interface RouteBase {
  /** GET routes answer HEAD too; OPTIONS is for a CORS preflight a service answers itself. */
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS';
  /** The path template, `:name` for a parameter; also the operation's name in logs and metrics. */
  path: string;
}

/** A route anyone may call: the viewer's page, the OpenAPI document, a health check. */
export interface PublicRoute extends RouteBase {
  access: 'public';
  handle(request: RouteRequest): RouteAnswer | Promise<RouteAnswer>;
}

/** What every route its service's access control decides on declares, besides its access. */
interface DecidedRouteBase extends RouteBase {
  /** The request carries a JSON body (`application/json`, UTF-8, at most the table's limit). */
  body?: 'json';
  /**
   * The route answers with an event stream and keeps the connection: the gateway's front may serve
   * it straight off the socket (see the stream gateway's `stream-front.ts`).
   */
  stream?: boolean;
}

/** A route on one room scope its service's access control decides on, for `access`, before the body is read. */
export interface ScopedRoute<A = unknown> extends DecidedRouteBase {
  access: 'read' | 'write';
  handle(request: AuthorizedRequest<A>): RouteAnswer | Promise<RouteAnswer>;
}

/**
 * A route on the caller's own data across repositories (no repository in the path): its service's
 * access control decides on it (`decidePrincipal`) before the body is read, as on a scoped route.
 */
export interface PrincipalRoute<P = unknown> extends DecidedRouteBase {
  access: 'principal';
  handle(request: AuthorizedRequest<P>): RouteAnswer | Promise<RouteAnswer>;
}

/** A table's route: `A` is what its room routes are given, `P` what its principal routes are given. */
export type Route<A = unknown, P = unknown> = PublicRoute | ScopedRoute<A> | PrincipalRoute<P>;

/** What the pipeline needs of the service that owns a table. */
export interface RouteServices<A = unknown, P = unknown> {
  logger: Logger;
  /** One sample per request, labelled with the route template, method and status. */
  httpDuration: Histogram<'operation' | 'method' | 'status'>;
  /** Decides on the table's scoped and principal routes (needed when it has any). */
  access?: AccessControl<A, P>;
  /** Largest JSON body a scoped route reads. @defaultValue 64 KiB */
  bodyLimitBytes?: number;
}

/** One service's routes, each declared once, with what the pipeline needs to serve them. */
export interface RouteTable<A = unknown, P = unknown> {
  /** The service's name, for error messages. */
  service: string;
  routes: readonly Route<A, P>[];
  services: RouteServices<A, P>;
  /**
   * What a malformed `X-Request-Id` gets: `refuse` answers 400 `REQUEST_ID_INVALID` (the API's rule);
   * `replace` answers under a new ID (a page's files are worth no 400). @defaultValue 'refuse'
   */
  malformedRequestId?: 'refuse' | 'replace';
  /**
   * Each request to the table's routes gets an OpenTelemetry server span when tracing is on (the
   * API's); streams, which last hours, are left out. @defaultValue false
   */
  traced?: boolean;
}
