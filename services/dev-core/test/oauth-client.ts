import { createHash, randomBytes } from 'node:crypto';

/** The demo fixture's registered viewer app. */
export const VIEWER = { clientId: 'chat-viewer', redirectUri: 'http://127.0.0.1:8080/callback', origin: 'http://127.0.0.1:8080' } as const;

/** A fresh PKCE pair (RFC 7636): a 43-character verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Signs `userId` in through the development sign-in and returns the `Cookie` header value of the session. */
export async function signIn(base: string, userId: string): Promise<string> {
  const response = await fetch(`${base}/dev/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userId }),
  });
  if (response.status !== 200) throw new Error(`sign-in answered ${response.status}`);
  const { session } = (await response.json()) as { session: string };
  return `core_session=${session}`;
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  body: any;
}

async function raw(response: Response): Promise<RawAnswer> {
  const text = await response.text();
  const json = /^application\/json/.test(response.headers.get('content-type') ?? '');
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text === '' ? undefined : text };
}

/**
 * Calls the authorize API (`api`) or the web bridge (`bridge`) with the given query, never following
 * a redirect, so a test sees exactly what the browser would be told.
 */
export async function authorizeRequest(
  base: string,
  via: 'api' | 'bridge',
  query: Record<string, string | string[]>,
  cookie?: string,
): Promise<RawAnswer> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) for (const v of [value].flat()) params.append(name, v);
  const path = via === 'api' ? '/api/marketplace/oauth/authorize' : '/oauth/authorize';
  return raw(await fetch(`${base}${path}?${params.toString()}`, { redirect: 'manual', headers: cookie === undefined ? {} : { cookie } }));
}

/** Standard authorize parameters for the viewer with a PKCE challenge; override any of them. */
export function authorizeQuery(challenge: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    client_id: VIEWER.clientId,
    redirect_uri: VIEWER.redirectUri,
    scope: 'chat core:commits:read',
    state: `st-${randomBytes(8).toString('hex')}`,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
}

/** `POST /api/marketplace/oauth/token`, form-encoded like an OAuth client (or JSON when asked). */
export async function exchangeCode(
  base: string,
  body: Record<string, string>,
  options: { json?: boolean; origin?: string } = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = {
    'content-type': options.json === true ? 'application/json' : 'application/x-www-form-urlencoded',
  };
  if (options.origin !== undefined) headers['origin'] = options.origin;
  return raw(
    await fetch(`${base}/api/marketplace/oauth/token`, {
      method: 'POST',
      headers,
      body: options.json === true ? JSON.stringify(body) : new URLSearchParams(body).toString(),
    }),
  );
}

/** The token body for a code issued to the viewer. */
export function tokenBody(code: string, verifier: string, overrides: Record<string, string> = {}): Record<string, string> {
  return { grant_type: 'authorization_code', code, redirect_uri: VIEWER.redirectUri, client_id: VIEWER.clientId, code_verifier: verifier, ...overrides };
}
