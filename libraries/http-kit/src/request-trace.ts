import type { IncomingMessage, ServerResponse } from 'node:http';
import { activeTracer, startRequestSpan, type RequestSpan } from '@chat/tracing';

/**
 * A request's server span, ended with the response's status when the response closes; undefined
 * while tracing is off. The span names the route template and keeps the path without its query.
 */
export function traceRequest(req: IncomingMessage, res: ServerResponse, request: { method: string; route: string; requestId: string }): RequestSpan | undefined {
  if (activeTracer() === undefined) return undefined;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const span = startRequestSpan({ ...request, path: q === -1 ? url : url.slice(0, q), headers: req.headers });
  if (span) res.once('close', () => span.end(res.statusCode));
  return span;
}
