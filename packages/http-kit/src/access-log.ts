import type { NextFunction, Request, Response } from 'express';
import type { Histogram } from 'prom-client';
import type { Logger } from '@chat/observability';
import './locals.ts';

declare module 'express-serve-static-core' {
  interface Locals {
    /** Set by the first access logger a request meets, so nested routers do not log it twice. */
    accessLogged?: boolean;
  }
}

/**
 * One log line and one latency sample per request, written when the response finishes (for a
 * stream: when it closes), through the request's child logger, so it carries the request ID; it names
 * the route template, never headers or query strings (they may hold tokens or cursors).
 */
export function accessLog(logger: Logger, httpDuration: Histogram<'operation' | 'method' | 'status'>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (res.locals.accessLogged) return next();
    res.locals.accessLogged = true;
    // assignRequestId binds the request ID to it; the error writer and handlers log through it.
    res.locals.log ??= logger;
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const operation = req.route?.path ? String(req.route.path) : 'unmatched';
      httpDuration.observe({ operation, method: req.method, status: String(res.statusCode) }, seconds);
      if (!logger.isLevelEnabled('info')) return;
      // A long-lived response (a stream) may have let its request logger go while it was open; the
      // line is still bound to its request ID.
      const log = res.locals.log ?? (typeof res.locals.requestId === 'string' ? logger.child({ requestId: res.locals.requestId }) : logger);
      log.info({ method: req.method, operation, status: res.statusCode, durationMs: Math.round(seconds * 1e4) / 10 }, 'request');
    });
    next();
  };
}
