import type { NextFunction, Request, Response } from 'express';
import { AppError, errorEnvelope } from '@chat/contracts';
import type { Logger } from '@chat/observability';
import './locals.ts';

/** Failures of the HTTP machinery itself that are the client's fault, answered 400. */
function clientFault(err: unknown): AppError | null {
  // express could not percent-decode a path parameter (e.g. `%C0%AE`).
  if (err instanceof URIError) return new AppError('SCOPE_INVALID', 'A path parameter is not valid percent-encoding.');
  // body-parser's failures carry a `type`.
  const type = (err as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return null;
  if (type === 'entity.too.large') return new AppError('REQUEST_INVALID', 'The request body is too large.');
  if (type === 'entity.parse.failed') return new AppError('REQUEST_INVALID', 'The request body is not valid JSON.');
  return new AppError('REQUEST_INVALID', 'The request body could not be read.');
}

/**
 * The one place that writes error bodies: the spec's envelope with the request's ID. Anything that
 * is not an AppError is a bug: it is logged and answered with a 500 that names no internals. Once a
 * stream has started, an error can only end the connection.
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const known = err instanceof AppError ? err : clientFault(err);
    const requestId = res.locals.requestId;
    const error = known ?? new AppError('RESPONSE_INVALID', 'The server could not complete the request.');
    if (!known) logger.error({ err, requestId, method: req.method, route: req.route?.path }, 'unhandled error');
    else if (error.status >= 500) logger.warn({ err: error.cause ?? error, requestId, code: error.code }, 'dependency failure');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(error.retryAfterSeconds))));
    res.status(error.status).json(errorEnvelope(error.code, error.message, requestId));
  };
}
