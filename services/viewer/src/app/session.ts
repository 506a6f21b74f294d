import type { ViewerConfig } from './config.ts';
import { randomToken, s256Challenge } from './pkce.ts';

/** What a sign-in yields. Kept in this tab's session storage only: never a URL, cookie or local storage. */
export interface Session {
  /** The human marketplace OAuth token for chat (`aud` chat). */
  accessToken: string;
  /** The core resource token (commit look-up, member directory, mentions), when a `core:` scope was granted. */
  coreAccessToken: string | undefined;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** The human the token names (its `sub`), for display only. */
  userId: string;
}

/** Where to come back to after a sign-in: the room address and the message at the top of the view. */
export interface ReturnPosition {
  hash: string;
  anchorMessageId?: string | undefined;
  /** Pixels between the anchor message's top and the top of the message list. */
  anchorOffset?: number | undefined;
}

interface PendingSignIn {
  state: string;
  verifier: string;
  returnTo: ReturnPosition;
}

const SESSION_KEY = 'chat-viewer.session';
const PENDING_KEY = 'chat-viewer.pending-sign-in';
/** A token this close to its end is not used to open anything new. */
const EXPIRY_MARGIN_MS = 60_000;

function readJson<T>(key: string): T | undefined {
  try {
    const text = sessionStorage.getItem(key);
    return text ? (JSON.parse(text) as T) : undefined;
  } catch {
    return undefined;
  }
}

/** The signed-in session of this tab, unless it is missing or about to expire. */
export function currentSession(now = Date.now()): Session | undefined {
  const session = readJson<Session>(SESSION_KEY);
  return session && session.expiresAt - EXPIRY_MARGIN_MS > now ? session : undefined;
}

export function signOut(): void {
  sessionStorage.removeItem(SESSION_KEY);
}

/**
 * Starts the handoff (spec 5, "Marketplace OAuth handoff"): a fresh `state` and PKCE verifier are
 * kept in this tab, and the browser goes to core's `/oauth/authorize` bridge, which answers with a
 * redirect to the registered callback (or core's own sign-in page first).
 */
export async function beginSignIn(config: ViewerConfig, returnTo: ReturnPosition): Promise<never> {
  const pending: PendingSignIn = { state: randomToken(), verifier: randomToken(), returnTo };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL('/oauth/authorize', config.coreUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    scope: 'chat core:commits:read core:members:read',
    state: pending.state,
    code_challenge: await s256Challenge(pending.verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
  return new Promise<never>(() => {});
}

/** A sign-in that did not complete, in words for the sign-in screen. */
export class SignInError extends Error {
  override name = 'SignInError';
}

/** Whether this page load is the OAuth callback. */
export function isCallback(config: ViewerConfig): boolean {
  return location.origin + location.pathname === config.redirectUri;
}

/**
 * Finishes the handoff on the callback page: the code and `state` are read, the address is scrubbed
 * (so neither stays in history, a bookmark or a Referer), `state` is checked against the one this tab
 * made, and the code is exchanged with the verifier. The pending sign-in is used up whatever happens.
 */
export async function completeSignIn(config: ViewerConfig): Promise<{ session: Session; returnTo: ReturnPosition }> {
  const params = new URLSearchParams(location.search);
  const pending = readJson<PendingSignIn>(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, '', '/' + (pending?.returnTo.hash ?? ''));
  const code = params.get('code');
  const state = params.get('state');
  if (!pending) throw new SignInError('This sign-in was not started in this tab. Sign in again.');
  if (!code || state === null || state !== pending.state) throw new SignInError('The sign-in answer did not match the request this tab made. Sign in again.');

  const response = await fetch(new URL('/api/marketplace/oauth/token', config.coreUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: config.redirectUri, client_id: config.clientId, code_verifier: pending.verifier }),
    cache: 'no-store',
    credentials: 'omit',
  });
  const body = (await response.json().catch(() => ({}))) as { access_token?: string; core_access_token?: string; expires_in?: number; error?: { code?: string; message?: string } };
  if (!response.ok || !body.access_token) {
    throw new SignInError(`Core refused the sign-in (${body.error?.code ?? response.status}). Sign in again.`);
  }
  const session: Session = {
    accessToken: body.access_token,
    coreAccessToken: body.core_access_token,
    expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000,
    userId: tokenSubject(body.access_token) ?? 'you',
  };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return { session, returnTo: pending.returnTo };
}

/** The `sub` claim of a JWT, read without verification: shown to the person, never trusted. */
function tokenSubject(token: string): string | undefined {
  try {
    const payload = token.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const sub = (JSON.parse(json) as { sub?: unknown }).sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}
