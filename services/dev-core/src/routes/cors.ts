import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PublicRoute } from '@chat/http-kit';
import type { FixtureStore } from '../domain/fixture-store.ts';
import { CoreRefusalError } from './http-errors.ts';

/** How long a browser may cache a preflight answer. @defaultValue 600 seconds */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Origins of the registered apps' callbacks: the only pages allowed to call core's app endpoints. */
function registeredOrigins(store: FixtureStore): Set<string> {
  return new Set((store.current.apps ?? []).map((app) => new URL(app.redirectUri).origin));
}

/**
 * CORS for the endpoints a marketplace app's page calls from the browser (token exchange, commit
 * look-up, member directory, repositories); their handlers call it first. Only registered app origins
 * are named in `Access-Control-Allow-Origin`, never `*`, and credentials are never allowed: these
 * endpoints take bearer tokens and codes, never the core session cookie. A request carrying another
 * origin is refused outright (403 `origin_not_allowed`) rather than answered unreadably, so a foreign
 * page cannot even spend a code. Requests without `Origin` (not from a browser page) pass.
 * Returns the allowed origin, if the request named one.
 */
export function allowAppOrigin(store: FixtureStore, req: IncomingMessage, res: ServerResponse): string | undefined {
  res.setHeader('Vary', 'Origin');
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (!registeredOrigins(store).has(origin)) throw new CoreRefusalError(403, 'origin_not_allowed', 'this origin is not a registered app origin');
  res.setHeader('Access-Control-Allow-Origin', origin);
  return origin;
}

/**
 * The `OPTIONS` handler of an app endpoint: 204, and for a registered origin the preflight's answer,
 * where `methods` are the methods of the endpoint it guards.
 */
export function appPreflight(store: FixtureStore, methods: 'GET' | 'POST'): PublicRoute['handle'] {
  return ({ req, res }) => {
    if (allowAppOrigin(store, req, res) !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', methods);
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type');
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    res.statusCode = 204;
    res.end();
  };
}
