import type { IncomingMessage, ServerResponse } from 'node:http';
import Negotiator from 'negotiator';
import type { FixtureStore } from '../domain/fixture-store.ts';

/** `/dev/session` may send the browser back only to core's own bridge, as a path on this origin. */
export const SIGN_IN_RETURN_PATH = /^\/oauth\/authorize(\?[^#\s]*)?$/;

/**
 * Content-Security-Policy of the bridge's pages: no script, no outside resource, no framing, and forms
 * to core itself plus `formTargets`. Browsers apply `form-action` to every redirect that follows a
 * form submission (Chromium does), and the sign-in form's chain is `/dev/session` → `/oauth/authorize`
 * → the app's callback, so the sign-in page must also name the callback's origin or no sign-in ends.
 */
export function bridgePageCsp(formTargets: readonly string[] = []): string {
  return `default-src 'none'; style-src 'unsafe-inline'; form-action ${["'self'", ...formTargets].join(' ')}; frame-ancestors 'none'`;
}

/**
 * The origin of the callback registered for the app a bridge request names, if the app is registered:
 * the one place besides core that the sign-in's redirect chain may end. Taken from the registration,
 * never from the request's `redirect_uri`, so a request cannot widen the policy.
 */
export function registeredCallbackOrigin(store: FixtureStore, clientId: unknown): string | undefined {
  if (typeof clientId !== 'string') return undefined;
  const app = store.current.apps?.find((a) => a.clientId === clientId);
  return app === undefined ? undefined : new URL(app.redirectUri).origin;
}

const ANSWER_TYPES = ['application/json', 'text/html'];

/** Whether the caller is a browser navigating (its `Accept` prefers HTML) rather than a program (JSON, and no `Accept`). */
export function wantsHtml(req: IncomingMessage): boolean {
  return new Negotiator(req).mediaType(ANSWER_TYPES) === 'text/html';
}

/** Answers one of the bridge's pages with `status`, under the Content-Security-Policy `csp`. */
export function sendPage(res: ServerResponse, status: number, csp: string, html: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('Content-Length', Buffer.byteLength(html));
  res.end(html);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PAGE_STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem}form{display:flex;flex-direction:column;gap:.5rem;margin:1.5rem 0}
button{font:inherit;padding:.6rem 1rem;border:1px solid #8c959f;border-radius:6px;background:#f6f8fa;cursor:pointer;text-align:left}
button:hover,button:focus{background:#eaeef2}.fine{color:#59636e;font-size:.875rem}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head>
<body>
${body}
</body></html>
`;
}

/**
 * Core's sign-in page, shown by the bridge to a browser without a core session: which app is asking
 * (when the request names a registered one), then dev-core's development sign-in, one button per
 * fixture user, posting to `/dev/session` with the bridge URL to return to (a path on core's origin).
 */
export function signInPage(input: { appName: string | undefined; returnTo: string; users: string[] }): string {
  const asking = input.appName === undefined ? '' : `<p>to continue to <strong>${escapeHtml(input.appName)}</strong></p>\n`;
  return page(
    'Sign in to core',
    `<main>
<h1>Sign in to core</h1>
${asking}<form method="post" action="/dev/session">
<input type="hidden" name="returnTo" value="${escapeHtml(input.returnTo)}">
${input.users.map((u) => `<button type="submit" name="userId" value="${escapeHtml(u)}">${escapeHtml(u)}</button>`).join('\n')}
</form>
<p class="fine">Development sign-in: dev-core has no passwords, so pick the fixture user to sign in as.</p>
</main>`,
  );
}

/** The page a browser sees when the bridge refuses for any reason but a missing session: the reason, and never a redirect. */
export function bridgeRefusalPage(input: { code: string; message: string }): string {
  return page(
    'Core could not authorize the app',
    `<main>
<h1>The app could not be authorized</h1>
<p><strong>${escapeHtml(input.code)}</strong>: ${escapeHtml(input.message)}</p>
</main>`,
  );
}
