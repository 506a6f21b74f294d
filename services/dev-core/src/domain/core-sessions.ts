import { randomBytes } from 'node:crypto';

/** Name of the core web session cookie dev-core's development sign-in sets. */
export const CORE_SESSION_COOKIE = 'core_session';

/**
 * Lifetime of a development core session.
 * @defaultValue 8 hours
 */
export const CORE_SESSION_TTL_MS = 8 * 3600 * 1000;

interface Session {
  userId: string;
  expiresAt: number;
}

/**
 * Core web sessions made by the development sign-in (`POST /dev/session`). A session is an opaque
 * random token held only in memory: it stands for the human at core's own web app and is never given
 * to a marketplace app.
 */
export class CoreSessions {
  readonly #sessions = new Map<string, Session>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Opens a session for `userId` and returns its token. */
  open(userId: string): { token: string; expiresAt: number } {
    const now = this.#now();
    // Expired sessions go when a new one opens, so a long-running dev-core does not collect them.
    for (const [token, session] of this.#sessions) if (session.expiresAt <= now) this.#sessions.delete(token);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + CORE_SESSION_TTL_MS;
    this.#sessions.set(token, { userId, expiresAt });
    return { token, expiresAt };
  }

  /** The user a live session token stands for, or undefined for an unknown or expired one. */
  userOf(token: string | undefined): string | undefined {
    if (token === undefined) return undefined;
    const session = this.#sessions.get(token);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(token);
      return undefined;
    }
    return session.userId;
  }
}

/** The value of the core session cookie in a `Cookie` header, if any (the first one wins). */
export function sessionFromCookieHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === CORE_SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}
