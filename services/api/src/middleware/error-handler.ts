import type { NextFunction, Request, Response } from 'express';
import { AppError, errorEnvelope } from '@chat/contracts';
import type { Logger } from '@chat/observability';

/** body-parser's failures carry a `type`; every one of them is the client's fault, answered 400. */
function bodyParserError(err: unknown): AppError | null {
  const type = (err as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return null;
  if (type === 'entity.too.large') return new AppError('REQUEST_INVALID', 'The request body is too large.');
  if (type === 'entity.parse.failed') return new AppError('REQUEST_INVALID', 'The request body is not valid JSON.');
  return new AppError('REQUEST_INVALID', 'The request body could not be read.');
}

/**
 * The one place that writes error bodies: the spec's envelope with the request's ID. Anything that
 * is not an AppError is a bug: it is logged and answered with a 500 that names no internals.
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    // The router throws URIError for a path parameter that is not valid percent-encoding (e.g. %C0%AE).
    const known = err instanceof AppError ? err : err instanceof URIError ? new AppError('SCOPE_INVALID', 'A path parameter is not valid percent-encoding.') : bodyParserError(err);
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
