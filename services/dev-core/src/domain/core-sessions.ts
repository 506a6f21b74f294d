import { randomBytes } from 'node:crypto';

/** Name of the core web session cookie dev-core's development sign-in sets. */
export const CORE_SESSION_COOKIE = 'core_session';

/**
 * Lifetime of a development core session.
 * @defaultValue 8 hours
 */
export const CORE_SESSION_TTL_MS = 8 * 3600 * 1000;

/**
 * Most core sessions held at once; opening one more ends the oldest. Sign-in needs no password, so
 * anyone who reaches dev-core can open sessions, and memory must not grow with them.
 * @defaultValue 10,000
 */
export const MAX_CORE_SESSIONS = 10_000;

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
  /** In the order opened, which is also the order of expiry: every session lives the same time. */
  readonly #sessions = new Map<string, Session>();
  readonly #now: () => number;
  readonly #max: number;

  /** `max` is the cap on live sessions. @defaultValue {@link MAX_CORE_SESSIONS} */
  constructor(now: () => number, max: number = MAX_CORE_SESSIONS) {
    this.#now = now;
    this.#max = max;
  }

  /** How many sessions are held. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Opens a session for `userId` and returns its token; at the cap, the oldest session ends. */
  open(userId: string): { token: string; expiresAt: number } {
    const now = this.#now();
    // Expired sessions go when a new one opens, and at the cap the oldest live ones too, oldest first,
    // stopping at the first session that may stay: the rest expire later, so the sweep costs only
    // what it removes.
    for (const [token, session] of this.#sessions) {
      if (session.expiresAt > now && this.#sessions.size < this.#max) break;
      this.#sessions.delete(token);
    }
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
