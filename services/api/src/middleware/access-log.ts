import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@chat/observability';
import type { ApiMetrics } from '../metrics.ts';

/**
 * One log line and one latency sample per request, written when the response finishes. The line
 * carries the request ID and the route template, never headers or query strings (they may hold
 * tokens or cursors).
 */
export function accessLog(logger: Logger, metrics: ApiMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const operation = req.route?.path ? String(req.route.path) : 'unmatched';
      metrics.httpDuration.observe({ operation, method: req.method, status: String(res.statusCode) }, seconds);
      logger.info(
        { requestId: res.locals.requestId, method: req.method, operation, status: res.statusCode, durationMs: Math.round(seconds * 1e4) / 10 },
        'request',
      );
    });
    next();
  };
}
