import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { CoreClient, ScopeAuthorization, TokenVerifier, VerifiedPrincipal } from '@chat/authz-client';
import type { Logger } from '@chat/observability';
import type { Histogram } from 'prom-client';

/** The room scope of a request: the repository, and the branch on branch routes. */
export interface RequestScope {
  repositoryId: string;
  branchId: string | null;
}

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

/** A request whose token was verified and whose room scope core allowed, live, for the route's action. */
export interface AuthorizedRequest extends RouteRequest {
  principal: VerifiedPrincipal;
  scope: RequestScope;
  access: ScopeAuthorization;
  /** The JSON body, on routes that declare one. */
  body: unknown;
}

/**
 * What a handler answers: a status and a JSON body, which the pipeline writes; or nothing, when the
 * handler wrote the response itself (a stream, a file).
 */
export type RouteAnswer = { status: number; body: unknown } | void;

interface RouteBase {
  method: 'GET' | 'POST';
  /** The path template, `:name` for a parameter; also the operation's name in logs and metrics. */
  path: string;
}

/** A route anyone may call: the viewer's page, the OpenAPI document, a health check. */
export interface PublicRoute extends RouteBase {
  access: 'public';
  handle(request: RouteRequest): RouteAnswer | Promise<RouteAnswer>;
}

/**
 * A route on a room scope (`:repositoryId`, and `:branchId` on branch routes): the token is verified,
 * the scope parsed, and core asked live whether the caller may `access` it, before the body is read.
 */
export interface ScopedRoute extends RouteBase {
  access: 'read' | 'write';
  /** The request carries a JSON body (`application/json`, UTF-8, at most the table's limit). */
  body?: 'json';
  /**
   * The route answers with an event stream and keeps the connection: the gateway's front may serve
   * it straight off the socket (see the stream gateway's `stream-front.ts`).
   */
  stream?: boolean;
  handle(request: AuthorizedRequest): RouteAnswer | Promise<RouteAnswer>;
}

export type Route = PublicRoute | ScopedRoute;

/** What the pipeline needs of the service that owns a table. */
export interface RouteServices {
  logger: Logger;
  /** One sample per request, labelled with the route template, method and status. */
  httpDuration: Histogram<'operation' | 'method' | 'status'>;
  /** Needed by tables with scoped routes. */
  tokens?: TokenVerifier;
  core?: CoreClient;
  /** Largest JSON body a scoped route reads. @defaultValue 64 KiB */
  bodyLimitBytes?: number;
}

/** One service's routes, each declared once, with what the pipeline needs to serve them. */
export interface RouteTable {
  /** The service's name, for error messages. */
  service: string;
  routes: readonly Route[];
  services: RouteServices;
  /**
   * What a malformed `X-Request-Id` gets: `refuse` answers 400 `REQUEST_ID_INVALID` (the API's rule);
   * `replace` answers under a new ID (a page's files are worth no 400). @defaultValue 'refuse'
   */
  malformedRequestId?: 'refuse' | 'replace';
}
