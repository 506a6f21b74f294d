import express, { Router, type Request, type Response } from 'express';
import { sessionFromCookieHeader } from '../domain/core-sessions.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { OAuthRequestError, type AuthorizationGrant } from '../domain/marketplace-oauth.ts';
import { bridgePageCsp, bridgeRefusalPage, registeredCallbackOrigin, signInPage, wantsHtml } from './bridge-page.ts';
import { registeredAppCors } from './cors.ts';
import { sendError } from './http-errors.ts';

/** Headers of every handoff answer, success or failure: nothing in them may be cached or leak by referrer. */
function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/** Answers a refusal as JSON with its status: a handoff failure never redirects (spec section 5, rule 7). */
function sendRefusal(res: Response, err: unknown): void {
  if (!(err instanceof OAuthRequestError)) throw err;
  sendError(res, err.status, err.code, err.message, err.parameter === undefined ? {} : { parameter: err.parameter });
}

/** Runs the authorization for the human of the request's core session, or throws `session_required`. */
function authorizeForSession(ctx: DevCoreContext, req: Request): AuthorizationGrant {
  const userId = ctx.sessions.userOf(sessionFromCookieHeader(req.headers.cookie));
  if (userId === undefined) throw new OAuthRequestError(401, 'session_required', 'sign in to core first');
  return ctx.oauth.authorize(userId, req.query as Record<string, unknown>);
}

/** The callback with the code and the unchanged state appended; the registered URL is otherwise kept as is. */
function callbackLocation(grant: AuthorizationGrant): string {
  const url = new URL(grant.redirectUri);
  url.searchParams.append('code', grant.code);
  url.searchParams.append('state', grant.state);
  return url.toString();
}

/**
 * The marketplace OAuth handoff on core's origin (spec section 5; docs/core-contract.md section 4):
 * the web bridge a browser is sent to, the session-authorized API it uses, and the code exchange.
 */
export function marketplaceOAuthRoutes(ctx: DevCoreContext): Router {
  const router = Router();

  router.get('/api/marketplace/oauth/authorize', (req, res) => {
    noStore(res);
    try {
      res.json(authorizeForSession(ctx, req));
    } catch (err) {
      sendRefusal(res, err);
    }
  });

  // The core web app's bridge: the same authorization, answered to the browser as a 303 to the exact
  // registered callback. The session cookie stays on core's origin; the app sees only code and state.
  router.get('/oauth/authorize', (req, res) => {
    noStore(res);
    res.vary('Accept');
    try {
      // An empty body: the Location alone carries the callback, code and state.
      res.status(303).location(callbackLocation(authorizeForSession(ctx, req))).end();
    } catch (err) {
      if (!(err instanceof OAuthRequestError) || !wantsHtml(req)) {
        sendRefusal(res, err);
        return;
      }
      res.type('html').status(err.status);
      if (err.code !== 'session_required') {
        // A browser gets the refusal as a page naming it (still no redirect).
        res.setHeader('Content-Security-Policy', bridgePageCsp());
        res.send(bridgeRefusalPage({ code: err.code, message: err.message }));
        return;
      }
      // No session yet: core's sign-in page. Its form's redirect chain ends at the app's registered
      // callback, so that origin (and no other) is a form target too.
      const callbackOrigin = registeredCallbackOrigin(ctx.store, req.query.client_id);
      res.setHeader('Content-Security-Policy', bridgePageCsp(callbackOrigin === undefined ? [] : [callbackOrigin]));
      res.send(
        signInPage({
          appName: callbackOrigin === undefined ? undefined : String(req.query.client_id),
          returnTo: req.originalUrl,
          users: ctx.store.knownUsers(),
        }),
      );
    }
  });

  const tokenPath = '/api/marketplace/oauth/token';
  router.options(tokenPath, registeredAppCors(ctx.store));
  router.post(tokenPath, registeredAppCors(ctx.store), express.urlencoded({ extended: false, limit: '16kb' }), async (req, res) => {
    noStore(res);
    try {
      res.json(await ctx.oauth.exchange((req.body ?? {}) as Record<string, unknown>, req.headers.origin));
    } catch (err) {
      sendRefusal(res, err);
    }
  });
  return router;
}
