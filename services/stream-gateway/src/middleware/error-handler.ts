import type { NextFunction, Request, Response } from 'express';
import { AppError, errorEnvelope } from '@chat/contracts';
import type { Logger } from '@chat/observability';

/**
 * Writes every error of the gateway as the spec's envelope with the request's ID. Anything that is
 * not an AppError is a bug: logged, answered with a 500 naming no internals. Once a stream is open
 * an error can only end the connection.
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const known = err instanceof AppError ? err : null;
    const requestId = res.locals.requestId;
    const error = known ?? new AppError('RESPONSE_INVALID', 'The server could not complete the request.');
    if (!known) logger.error({ err, requestId, method: req.method, path: req.route?.path }, 'unhandled error');
    else if (error.status >= 500) logger.warn({ err: error.cause ?? error, requestId, code: error.code }, 'dependency failure');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(error.retryAfterSeconds))));
    res.status(error.status).json(errorEnvelope(error.code, error.message, requestId));
  };
}
