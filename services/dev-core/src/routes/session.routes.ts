import type { IncomingMessage } from 'node:http';
import type { PublicRoute } from '@chat/http-kit';
import { z } from 'zod';
import { CORE_SESSION_COOKIE, CORE_SESSION_TTL_MS } from '../domain/core-sessions.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { SIGN_IN_RETURN_PATH } from './bridge-page.ts';
import { CoreRefusalError, invalid } from './http-errors.ts';
import { readFormOrJson } from './request-body.ts';

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
function crossSiteReason(req: IncomingMessage): string | undefined {
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
 * The session cookie: confined to `/oauth`, the only core web page dev-core serves, so the browser
 * does not send it to other services that share the host (cookies ignore ports, and the chat service
 * runs on the same host in development); out of scripts' reach; sent on top-level navigations only.
 */
function sessionCookie(token: string): string {
  const expires = new Date(Date.now() + CORE_SESSION_TTL_MS).toUTCString();
  return `${CORE_SESSION_COOKIE}=${token}; Max-Age=${Math.floor(CORE_SESSION_TTL_MS / 1000)}; Path=/oauth; Expires=${expires}; HttpOnly; SameSite=Lax`;
}

/**
 * Development sign-in to core's web app: `POST /dev/session {"userId"}` opens a core session for a
 * fixture user, with no password, which is why it lives under `/dev/*`. The bridge's sign-in form posts
 * here with `returnTo` (form-encoded); the answer is then a 303 back to that bridge URL, a path on
 * core's own origin, never to an app. Another site's page cannot open a session (login CSRF, which
 * would sign a person in to core as someone else): it is refused before its body is read.
 */
export function sessionRoutes(ctx: DevCoreContext): PublicRoute[] {
  return [
    {
      method: 'POST',
      path: '/dev/session',
      access: 'public',
      handle: async ({ req, res }) => {
        const crossSite = crossSiteReason(req);
        if (crossSite !== undefined) throw new CoreRefusalError(403, 'origin_not_allowed', `a core session opens only from core's own pages (${crossSite})`);
        const body = sessionBodySchema.safeParse(await readFormOrJson(req));
        if (!body.success) throw invalid('session request', body.error);
        if (!ctx.store.isKnownUser(body.data.userId)) throw new CoreRefusalError(400, 'request_invalid', `unknown user ${body.data.userId}`);
        const session = ctx.sessions.open(body.data.userId);
        res.setHeader('Set-Cookie', sessionCookie(session.token));
        if (body.data.returnTo === undefined) {
          return { status: 200, body: { userId: body.data.userId, session: session.token, expiresAt: new Date(session.expiresAt).toISOString() } };
        }
        // Resolved against a placeholder origin only to percent-encode what a header may not carry.
        const back = new URL(body.data.returnTo, 'http://core.invalid');
        res.statusCode = 303;
        res.setHeader('Location', `${back.pathname}${back.search}`);
        res.end();
      },
    },
  ];
}
