import type { Request } from 'express';

/** `/dev/session` may send the browser back only to core's own bridge, as a path on this origin. */
export const SIGN_IN_RETURN_PATH = /^\/oauth\/authorize(\?[^#\s]*)?$/;

/** Content-Security-Policy of the bridge's pages: no script, no outside resource, forms to core only. */
export const BRIDGE_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

/** Whether the caller is a browser navigating (it prefers HTML) rather than a program (JSON). */
export function wantsHtml(req: Request): boolean {
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The page a browser sees when the bridge refuses: the reason, and never a redirect. When the refusal
 * is a missing session, dev-core adds its development sign-in: one button per fixture user, posting to
 * `/dev/session` with the bridge URL to return to (a path on core's origin, so no app is involved).
 */
export function bridgeRefusalPage(input: { code: string; message: string; returnTo: string; signInUsers?: string[] }): string {
  const signIn =
    input.signInUsers === undefined
      ? ''
      : `<h2>Development sign-in</h2>
<p>dev-core has no passwords: pick a fixture user to open a core session as.</p>
<form method="post" action="/dev/session">
<input type="hidden" name="returnTo" value="${escapeHtml(input.returnTo)}">
${input.signInUsers.map((u) => `<button type="submit" name="userId" value="${escapeHtml(u)}">${escapeHtml(u)}</button>`).join('\n')}
</form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Core sign-in</title></head>
<body>
<h1>The app could not be authorized</h1>
<p><strong>${escapeHtml(input.code)}</strong>: ${escapeHtml(input.message)}</p>
${signIn}
</body></html>
`;
}
