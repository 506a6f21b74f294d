import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, errorEnvelope } from '@chat/contracts';
import type { Logger } from '@chat/observability';
import type { NextFunction, Request, Response } from 'express';

/**
 * Hot routes can be served on Node's own request and response instead of through express, which
 * gives every request its own prototype (a hidden class per request in V8) and costs ~150 µs of CPU
 * per request on this code's machines. These helpers let such a route run the same http-kit
 * middleware and write the same envelope; the middleware only touches `req.headers`, `req.params`,
 * `req.method`, `req.route`, `res.locals`, `res.setHeader` and `res.once`.
 */
export type PlainRequest = IncomingMessage & { params: Record<string, string>; route: { path: string } };
export type PlainResponse = ServerResponse & { locals: Record<string, unknown> };
export type Middleware = (req: Request, res: Response, next: NextFunction) => unknown;

/** A route a plain listener serves: a pattern over the path with named groups, and its express template. */
export interface PlainRoutePattern {
  /** Matched against the path alone (no query); named groups become `req.params`. */
  pattern: RegExp;
  /** The express route template, for the access log and metrics (`req.route.path`). */
  path: string;
}

/** The first route whose pattern matches the URL's path, with its params and the raw query string. */
export function matchPlainRoute<R extends PlainRoutePattern>(url: string, routes: readonly R[]): { route: R; params: Record<string, string>; query: string } | undefined {
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  for (const route of routes) {
    const m = route.pattern.exec(pathname);
    if (!m) continue;
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(m.groups ?? {})) if (value !== undefined) params[name] = value;
    return { route, params, query: q === -1 ? '' : url.slice(q + 1) };
  }
  return undefined;
}

/** Gives a plain request and response what the middleware reads: route template, params, locals. */
export function asPlainRoute(req: IncomingMessage, res: ServerResponse, route: { path: string; params: Record<string, string> }): { req: PlainRequest; res: PlainResponse } {
  const plainReq = req as PlainRequest;
  const plainRes = res as PlainResponse;
  plainReq.params = route.params;
  plainReq.route = { path: route.path };
  plainRes.locals = {};
  return { req: plainReq, res: plainRes };
}

/** Runs one express-style middleware: resolves on `next()`, rejects on `next(err)`, a throw or a rejection. */
export function runMiddleware(step: Middleware, req: PlainRequest, res: PlainResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      const result = step(req as unknown as Request, res as unknown as Response, (err?: unknown) => (err ? reject(err) : resolve()));
      if (result instanceof Promise) result.catch(reject);
    } catch (err) {
      reject(err);
    }
  });
}

/**
 * Writes `body` as JSON the way express's `res.status(status).json(body)` does, marked
 * `Cache-Control: no-store`: every answer is one principal's, authorized live, so no cache on
 * the way may keep it or hand it to anyone else (see {@link noStore}).
 */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Failures of the HTTP machinery itself that are the client's fault, answered 400. */
function clientFault(err: unknown): AppError | null {
  // express could not percent-decode a path parameter (e.g. `%C0%AE`).
  if (err instanceof URIError) return new AppError('SCOPE_INVALID', 'A path parameter is not valid percent-encoding.');
  // Body readers' failures carry a `type` (body-parser's, and readJsonBody's).
  const type = (err as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return null;
  if (type === 'entity.too.large') return new AppError('REQUEST_INVALID', 'The request body is too large.');
  if (type === 'entity.parse.failed') return new AppError('REQUEST_INVALID', 'The request body is not valid JSON.');
  return new AppError('REQUEST_INVALID', 'The request body could not be read.');
}

/**
 * The one place that writes error bodies: the spec's envelope with the request's ID. Anything that
 * is not an AppError (or a known client fault) is a bug: it is logged and answered with a 500 that
 * names no internals. Once a response has started, an error can only end the connection.
 */
export function writeError(logger: Logger, req: IncomingMessage & { route?: { path?: unknown } }, res: ServerResponse & { locals: Record<string, unknown> }, err: unknown): void {
  const known = err instanceof AppError ? err : clientFault(err);
  // Set by assignRequestId, which runs before anything that can fail.
  const requestId = res.locals.requestId as string;
  const error = known ?? new AppError('RESPONSE_INVALID', 'The server could not complete the request.');
  // The request's own logger carries its ID already; the process logger is the fallback.
  const log = (res.locals.log as Logger | undefined) ?? logger.child({ requestId });
  if (!known) log.error({ err, method: req.method, route: req.route?.path }, 'unhandled error');
  else if (error.status >= 500) log.warn({ err: error.cause ?? error, code: error.code }, 'dependency failure');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(error.retryAfterSeconds))));
  writeJson(res, error.status, errorEnvelope(error.code, error.message, requestId));
}
