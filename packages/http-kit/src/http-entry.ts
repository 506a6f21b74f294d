import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { matchPlainRoute, type PlainRoutePattern } from './plain-route.ts';

/**
 * A hot route served on Node's own request and response (see plain-route.ts for why): its method,
 * its path pattern, an optional check of the raw request, and the function that serves it.
 */
export interface FastRoute extends PlainRoutePattern {
  method: 'GET' | 'HEAD' | 'POST';
  /** Whether this request can take the fast path (e.g. a plain JSON body); if not, the fallback serves it. @defaultValue always */
  accepts?(req: IncomingMessage): boolean;
  serve(req: IncomingMessage, res: ServerResponse, match: { params: Record<string, string>; query: string }): void;
}

/**
 * The one request listener of a process: the fast routes are consulted first, in order; everything
 * else (and any request a route does not accept) goes to `fallback`, the express app, which answers
 * it the same way in every respect but speed.
 */
export function createHttpEntry(routes: readonly FastRoute[], fallback: RequestListener): RequestListener {
  const byMethod = new Map<string, FastRoute[]>();
  for (const route of routes) byMethod.set(route.method, [...(byMethod.get(route.method) ?? []), route]);
  return (req, res) => {
    const candidates = byMethod.get(req.method ?? '');
    const match = candidates ? matchPlainRoute(req.url ?? '', candidates) : undefined;
    if (!match || (match.route.accepts && !match.route.accepts(req))) {
      fallback(req, res);
      return;
    }
    match.route.serve(req, res, { params: match.params, query: match.query });
  };
}
