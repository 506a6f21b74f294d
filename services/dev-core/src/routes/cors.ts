import type { RequestHandler } from 'express';
import type { FixtureStore } from '../domain/fixture-store.ts';
import { sendError } from './http-errors.ts';

/** How long a browser may cache a preflight answer. @defaultValue 600 seconds */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Origins of the registered apps' callbacks: the only pages allowed to call core's app endpoints. */
function registeredOrigins(store: FixtureStore): Set<string> {
  return new Set((store.current.apps ?? []).map((app) => new URL(app.redirectUri).origin));
}

/**
 * CORS for the endpoints a marketplace app's page calls from the browser (token exchange, commit
 * look-up). Only registered app origins are named in `Access-Control-Allow-Origin`, never `*`, and
 * credentials are never allowed: these endpoints take bearer tokens and codes, never the core session
 * cookie. A request carrying another origin is refused outright rather than answered unreadably, so a
 * foreign page cannot even spend a code. Requests without `Origin` (not from a browser page) pass.
 * `methods` is what a preflight allows: the methods of the endpoint it guards.
 */
export function registeredAppCors(store: FixtureStore, methods = 'POST'): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    res.vary('Origin');
    if (origin === undefined) {
      next();
      return;
    }
    if (!registeredOrigins(store).has(origin)) {
      sendError(res, 403, 'origin_not_allowed', 'this origin is not a registered app origin');
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', methods);
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type');
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
      res.status(204).end();
      return;
    }
    next();
  };
}
