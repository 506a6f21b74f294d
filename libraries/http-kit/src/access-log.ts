import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Histogram } from 'prom-client';
import type { Logger } from '@chat/observability';

/**
 * One log line and one latency sample for a request, written when its response closes (for a stream:
 * when the stream ends). It names the route template (`operation`), never headers or query strings:
 * they may hold tokens or cursors. The line is bound to the request's ID through `log`.
 */
export function logWhenClosed(
  req: IncomingMessage,
  res: ServerResponse,
  services: { logger: Logger; httpDuration: Histogram<'operation' | 'method' | 'status'> },
  request: { operation: string; requestId: string },
): void {
  const started = process.hrtime.bigint();
  const method = req.method ?? '';
  res.once('close', () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    services.httpDuration.observe({ operation: request.operation, method, status: String(res.statusCode) }, seconds);
    if (!services.logger.isLevelEnabled('info')) return;
    services.logger.info({ requestId: request.requestId, method, operation: request.operation, status: res.statusCode, durationMs: Math.round(seconds * 1e4) / 10 }, 'request');
  });
}
