import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { PublicRoute } from '@chat/http-kit';
import { sessionFromCookieHeader } from '../domain/core-sessions.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { OAuthRequestError, type AuthorizationGrant } from '../domain/marketplace-oauth.ts';
import { bridgePageCsp, bridgeRefusalPage, registeredCallbackOrigin, sendPage, signInPage, wantsHtml } from './bridge-page.ts';
import { allowAppOrigin, appPreflight } from './cors.ts';
import { CoreRefusalError } from './http-errors.ts';
import { readFormOrJson } from './request-body.ts';

const TOKEN_PATH = '/api/marketplace/oauth/token';

/** Headers of every handoff answer, success or failure: nothing in them may be cached or leak by referrer. */
function noStore(res: ServerResponse): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/** A handoff refusal, answered as JSON with its status: a handoff failure never redirects (spec section 5, rule 7). */
function refusal(err: unknown): unknown {
  if (!(err instanceof OAuthRequestError)) return err;
  return new CoreRefusalError(err.status, err.code, err.message, err.parameter === undefined ? {} : { parameter: err.parameter });
}

/** Runs the authorization for the human of the request's core session, or throws `session_required`. */
function authorizeForSession(ctx: DevCoreContext, req: IncomingMessage, query: ParsedUrlQuery): AuthorizationGrant {
  const userId = ctx.sessions.userOf(sessionFromCookieHeader(req.headers.cookie));
  if (userId === undefined) throw new OAuthRequestError(401, 'session_required', 'sign in to core first');
  return ctx.oauth.authorize(userId, query);
}

/** The callback with the code and the unchanged state appended; the registered URL is otherwise kept as is. */
function callbackLocation(grant: AuthorizationGrant): string {
  const url = new URL(grant.redirectUri);
  url.searchParams.append('code', grant.code);
  url.searchParams.append('state', grant.state);
  return url.toString();
}

/**
 * The bridge's answer to a browser it refuses: core's sign-in page when there is no session yet, else
 * a page naming the refusal (still no redirect).
 */
function refusalPage(ctx: DevCoreContext, req: IncomingMessage, res: ServerResponse, query: ParsedUrlQuery, err: OAuthRequestError): void {
  if (err.code !== 'session_required') {
    sendPage(res, err.status, bridgePageCsp(), bridgeRefusalPage({ code: err.code, message: err.message }));
    return;
  }
  // The sign-in form's redirect chain ends at the app's registered callback, so that origin (and no
  // other) is a form target too.
  const callbackOrigin = registeredCallbackOrigin(ctx.store, query['client_id']);
  const page = signInPage({ appName: callbackOrigin === undefined ? undefined : String(query['client_id']), returnTo: req.url ?? '/', users: ctx.store.knownUsers() });
  sendPage(res, err.status, bridgePageCsp(callbackOrigin === undefined ? [] : [callbackOrigin]), page);
}

/**
 * The marketplace OAuth handoff on core's origin (spec section 5; docs/core-contract.md section 4):
 * the session-authorized API, the web bridge a browser is sent to, and the code exchange (with its
 * CORS preflight: an app's page calls it).
 */
export function marketplaceOAuthRoutes(ctx: DevCoreContext): PublicRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/marketplace/oauth/authorize',
      access: 'public',
      handle: ({ req, res, query }) => {
        noStore(res);
        try {
          return { status: 200, body: authorizeForSession(ctx, req, query) };
        } catch (err) {
          throw refusal(err);
        }
      },
    },
    // The core web app's bridge: the same authorization, answered to the browser as a 303 to the exact
    // registered callback. The session cookie stays on core's origin; the app sees only code and state.
    {
      method: 'GET',
      path: '/oauth/authorize',
      access: 'public',
      handle: ({ req, res, query }) => {
        noStore(res);
        res.setHeader('Vary', 'Accept');
        let location: string;
        try {
          location = callbackLocation(authorizeForSession(ctx, req, query));
        } catch (err) {
          if (!(err instanceof OAuthRequestError) || !wantsHtml(req)) throw refusal(err);
          refusalPage(ctx, req, res, query, err);
          return;
        }
        // An empty body: the Location alone carries the callback, code and state.
        res.statusCode = 303;
        res.setHeader('Location', location);
        res.end();
      },
    },
    { method: 'OPTIONS', path: TOKEN_PATH, access: 'public', handle: appPreflight(ctx.store, 'POST') },
    {
      method: 'POST',
      path: TOKEN_PATH,
      access: 'public',
      handle: async ({ req, res }) => {
        allowAppOrigin(ctx.store, req, res);
        noStore(res);
        const body = (await readFormOrJson(req)) ?? {};
        try {
          return { status: 200, body: await ctx.oauth.exchange(body as Record<string, unknown>, req.headers.origin) };
        } catch (err) {
          throw refusal(err);
        }
      },
    },
  ];
}
