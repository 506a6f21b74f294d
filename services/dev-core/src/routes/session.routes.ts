import express, { Router, type Request } from 'express';
import { z } from 'zod';
import { CORE_SESSION_COOKIE, CORE_SESSION_TTL_MS } from '../domain/core-sessions.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { SIGN_IN_RETURN_PATH } from './bridge-page.ts';
import { sendError } from './http-errors.ts';

const sessionBodySchema = z.object({
  userId: z.string().min(1).max(128),
  returnTo: z.string().max(4096).regex(SIGN_IN_RETURN_PATH, 'must be a path of /oauth/authorize on this origin').optional(),
});

/**
 * Why a request comes from another site's page, if it does. Browsers mark every request with
 * `Sec-Fetch-Site`: only `same-origin` (core's own sign-in page) or `none` (the person's own action)
 * may open a session. `same-site` is refused too: the viewer and chat share core's host in development
 * (sites ignore ports), and a page there must not sign its visitor in. A browser without Fetch Metadata
 * still sends `Origin` on a POST, which must then be this origin. A request with neither header comes
 * from no browser page (a test, curl), the JSON form's callers, and passes.
 */
function crossSiteReason(req: Request): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin' || site === 'none' ? undefined : `Sec-Fetch-Site is ${site}`;
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  return host !== undefined && host === req.headers.host ? undefined : `Origin ${origin} is not this origin`;
}

/**
 * Development sign-in to core's web app: `POST /dev/session {"userId"}` opens a core session for a
 * fixture user, with no password, which is why it lives under `/dev/*`. The cookie's path is `/oauth`,
 * the only core web page dev-core serves, so the browser does not send it to other services that
 * share the host (cookies ignore ports, and the chat service runs on the same host in development).
 * The bridge's sign-in form posts here with `returnTo` (form-encoded); the answer is then a 303 back
 * to that bridge URL, a path on core's own origin, never to an app. Another site's page cannot open
 * a session (login CSRF, which would sign a person in to core as someone else).
 */
export function sessionRoutes(ctx: DevCoreContext): Router {
  const router = Router();
  router.post('/dev/session', express.urlencoded({ extended: false, limit: '16kb' }), (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const crossSite = crossSiteReason(req);
    if (crossSite !== undefined) {
      sendError(res, 403, 'origin_not_allowed', `a core session opens only from core's own pages (${crossSite})`);
      return;
    }
    const body = sessionBodySchema.safeParse(req.body);
    if (!body.success) {
      sendError(res, 400, 'request_invalid', 'session request invalid', { issues: body.error.issues });
      return;
    }
    if (!ctx.store.isKnownUser(body.data.userId)) {
      sendError(res, 400, 'request_invalid', `unknown user ${body.data.userId}`);
      return;
    }
    const session = ctx.sessions.open(body.data.userId);
    res.cookie(CORE_SESSION_COOKIE, session.token, {
      path: '/oauth',
      httpOnly: true,
      sameSite: 'lax',
      maxAge: CORE_SESSION_TTL_MS,
    });
    if (body.data.returnTo !== undefined) {
      res.status(303).location(body.data.returnTo).end();
      return;
    }
    res.json({ userId: body.data.userId, session: session.token, expiresAt: new Date(session.expiresAt).toISOString() });
  });
  return router;
}
