import type { ServerResponse } from 'node:http';
import { AppError, errorEnvelope, type ErrorCode } from '@chat/contracts';
import type { Logger } from '@chat/observability';

/**
 * Writes `body` as JSON with its length. Caching is the caller's to say: the route pipeline marks
 * each of its answers `Cache-Control: no-store` before the handler runs.
 */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** A 204: HTTP gives it no body, so it has no content headers either. */
export function writeNoContent(res: ServerResponse): void {
  res.statusCode = 204;
  res.end();
}

/**
 * The one place that writes error bodies: the spec's envelope with the request's ID. Anything that
 * is not an AppError is a bug: it is logged and answered with a 500 that names no internals. Once a
 * response has started, an error can only end the connection. Returns the envelope's code, or
 * undefined when none could be written.
 */
export function writeError(
  logger: Logger,
  request: { method: string; operation: string; requestId: string },
  res: ServerResponse,
  err: unknown,
): ErrorCode | undefined {
  const known = err instanceof AppError ? err : undefined;
  const error = known ?? new AppError('RESPONSE_INVALID', 'The server could not complete the request.');
  if (!known) logger.error({ err, requestId: request.requestId, method: request.method, route: request.operation }, 'unhandled error');
  else if (error.status >= 500) logger.warn({ err: error.cause ?? error, requestId: request.requestId, code: error.code }, 'dependency failure');
  if (res.headersSent) {
    res.destroy();
    return undefined;
  }
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.max(0, Math.ceil(error.retryAfterSeconds))));
  writeJson(res, error.status, errorEnvelope(error.code, error.message, request.requestId));
  return error.code;
}
