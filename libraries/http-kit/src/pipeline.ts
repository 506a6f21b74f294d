import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { AppError } from '@chat/contracts';
import { logWhenClosed, type AccessRecord } from './access-log.ts';
import { readJsonBody } from './json-body.ts';
import { requestIdOf } from './request-id.ts';
import { traceRequest } from './request-trace.ts';
import type { AccessRequest, PrincipalRoute, Route, RouteAnswer, RouteRequest, RouteServices, RouteTable, ScopedRoute } from './route.ts';
import { RouteMatcher, type RouteLookup } from './route-match.ts';
import { writeError, writeJson, writeNoContent } from './write.ts';

/** The JSON body limit of a table that names none. */
const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/** A held stream keeps no request headers: nothing reads them once it is open, and one is a bearer token. */
const NO_HEADERS: IncomingMessage['headers'] = Object.freeze({});
const NO_RAW_HEADERS: string[] = Object.freeze([]) as unknown as string[];

export interface RoutePipelineOptions {
  /**
   * Answers a path no table declares. @defaultValue 404 `RESOURCE_NOT_FOUND` in the envelope
   */
  notFound?(req: IncomingMessage, res: ServerResponse): void;
}

/** A process's route tables behind one request listener. */
export interface RoutePipeline {
  /** The process's request listener: every request, every route, one pipeline. */
  listener: RequestListener;
  /** Whether `method` and `target` name a stream route (one whose handler keeps the connection). */
  isStreamRoute(method: string, target: string): boolean;
}

/**
 * Serves the routes of `tables` (one per service in the process) through one pipeline, in this order:
 * the access log (written when the response closes, with the principal once its token is verified
 * and the code of any error envelope; a stream's latency sample is its time to first byte), the
 * request ID, `Cache-Control: no-store`, the route (404, or 405 with `Allow`), then for a scoped
 * route the token, the scope and core's live decision (for a principal route the token and core's
 * live answer of what the caller may read), then the JSON body, then the handler, whose answer is
 * written as JSON; every error is written by {@link writeError} in the spec's envelope. A stream route's handler keeps the response;
 * the pipeline then lets go of the request's headers.
 *
 * `no-store` is set here, once, for every answer (JSON, error envelope or a handler's own): each is
 * one principal's, authorized live, so no cache on the way may keep it or hand it to anyone else. A
 * handler that writes its own answer may set other caching for it (a key set, a hashed asset).
 */
export function createRoutePipeline(tables: readonly RouteTable[], options: RoutePipelineOptions = {}): RoutePipeline {
  const matcher = new RouteMatcher(tables);
  const fallbackServices = tables[0]?.services;
  if (!fallbackServices) throw new Error('a route pipeline needs at least one table');
  for (const table of tables) {
    if (table.routes.some((route) => route.access !== 'public') && !table.services.access) {
      throw new Error(`${table.service}'s scoped routes need an access control`);
    }
    if (table.routes.some((route) => route.access === 'principal') && !table.services.access?.decidePrincipal) {
      throw new Error(`${table.service}'s principal routes need an access control that decides on principals`);
    }
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? '';
    const found = matcher.lookup(method, req.url ?? '/');
    const table = found.kind === 'route' ? found.compiled.table : undefined;
    const services = table?.services ?? fallbackServices!;
    const operation = found.kind === 'route' ? found.compiled.route.path : found.kind === 'method-not-allowed' ? found.template : 'unmatched';
    const { requestId, malformed } = requestIdOf(req);
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    const access = logWhenClosed(req, res, services, { route: operation, requestId });
    const request: Served = { method, found, table, services, operation, requestId, malformed, access };
    // A traced table's request runs in its server span (tracing on): what it calls becomes its children.
    const span = table?.traced === true ? traceRequest(req, res, { method, route: operation, requestId }) : undefined;
    return span ? span.within(() => respond(req, res, request)) : respond(req, res, request);
  }

  async function respond(req: IncomingMessage, res: ServerResponse, request: Served): Promise<void> {
    const { method, found, table, services, operation, requestId, malformed, access } = request;
    try {
      // A path no table declares is the fallback's to answer, under a new ID if need be.
      const replaces = table ? table.malformedRequestId === 'replace' : options.notFound !== undefined;
      if (malformed && !replaces) {
        throw new AppError('REQUEST_ID_INVALID', 'X-Request-Id must be 1–128 characters of A–Z, a–z, 0–9, ".", "_", ":" or "-".');
      }
      if (found.kind === 'none') {
        if (options.notFound) return options.notFound(req, res);
        throw new AppError('RESOURCE_NOT_FOUND', 'No such resource.');
      }
      const route = found.kind === 'route' ? found.compiled.route : undefined;
      if (found.kind === 'method-not-allowed' || (method === 'HEAD' && route?.access !== 'public' && (route as ScopedRoute | PrincipalRoute).stream)) {
        const allow = found.kind === 'method-not-allowed' ? found.allow : 'GET';
        res.setHeader('Allow', allow);
        throw new AppError('REQUEST_INVALID', `This path accepts only ${allow}.`, { status: 405 });
      }
      const answer = await handle(found, { req, res, requestId, services, access });
      if (answer) {
        if (answer.status === 204) writeNoContent(res);
        else writeJson(res, answer.status, answer.body);
      }
      else if ((route as ScopedRoute | PrincipalRoute).stream && res.headersSent) {
        access.firstByteSent();
        req.headers = NO_HEADERS;
        req.rawHeaders = NO_RAW_HEADERS;
      }
    } catch (err) {
      access.code = writeError(services.logger, { method, operation, requestId }, res, err);
    }
  }

  return {
    listener: (req, res) => void serve(req, res),
    isStreamRoute(method, target) {
      const found = matcher.lookup(method, target);
      return method === 'GET' && found.kind === 'route' && isStream(found.compiled.route);
    },
  };
}

/** What the pipeline knows of a request once its route is looked up and its access record started. */
interface Served {
  method: string;
  found: RouteLookup;
  table: RouteTable | undefined;
  services: RouteServices;
  operation: string;
  requestId: string;
  malformed: boolean;
  access: AccessRecord;
}

function isStream(route: Route): boolean {
  return route.access !== 'public' && route.stream === true;
}

/** Decodes the path parameters, reads the query, runs the access steps and the body, and calls the handler. */
async function handle(
  found: Extract<RouteLookup, { kind: 'route' }>,
  context: { req: IncomingMessage; res: ServerResponse; requestId: string; services: RouteServices; access: AccessRecord },
): Promise<RouteAnswer> {
  const { req, res, requestId, services, access } = context;
  const { route, names } = found.compiled;
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i += 1) params[names[i]!] = decodeParam(found.rawParams[i]!);
  let log: RouteRequest['log'] | undefined;
  const request: RouteRequest = {
    req,
    res,
    requestId,
    params,
    query: parseQuery(found.query),
    // Bound on first use: a request that logs nothing (most of them) makes no child logger.
    get log() {
      return (log ??= services.logger.child({ requestId }));
    },
  };
  if (route.access === 'public') return route.handle(request);
  const accessRequest: AccessRequest = {
    headers: req.headers,
    params,
    requestId,
    authenticated: (principal) => {
      access.principal = { kind: principal.kind, id: principal.id };
    },
  };
  const decision =
    route.access === 'principal' ? await services.access!.decidePrincipal!(accessRequest) : await services.access!.decide(accessRequest, route.access);
  const body = route.body === 'json' ? await readJsonBody(req, services.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES) : undefined;
  return route.handle(Object.assign(request, decision as object, { body }));
}

function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new AppError('SCOPE_INVALID', 'A path parameter is not valid percent-encoding.');
  }
}
