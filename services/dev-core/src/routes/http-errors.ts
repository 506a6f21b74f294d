import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';

/** Writes dev-core's error body. It is core's own format, deliberately unlike chat's envelope. */
export function sendError(res: Response, status: number, code: string, message: string, extra: object = {}): void {
  res.status(status).json({ error: { code, message, ...extra } });
}

/** Turns body-parser failures into 400s and anything else into a logged 500 that names nothing. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      sendError(res, status, 'request_invalid', 'request body could not be read');
      return;
    }
    logger.error({ err }, 'unexpected error');
    sendError(res, 500, 'internal', 'internal error');
  };
}
