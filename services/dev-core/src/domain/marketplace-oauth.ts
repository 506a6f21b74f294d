import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import type { FixtureStore } from './fixture-store.ts';
import { scopeSchema, type FixtureApp } from './fixture.schema.ts';
import { mintToken, type TokenMinterDeps } from './token-minter.ts';

/**
 * How long an authorization code can be exchanged (spec section 5, "Marketplace OAuth handoff").
 * @defaultValue 10 minutes
 */
export const AUTHORIZATION_CODE_TTL_MS = 10 * 60 * 1000;

/**
 * Lifetime of the tokens the exchange answers.
 * @defaultValue 3600 seconds
 */
export const HANDOFF_TOKEN_TTL_SECONDS = 3600;

/**
 * Authorization codes held at once, used ones included until they expire (a replay must still be
 * recognised). Past it, authorization is refused until codes expire: each code costs memory for ten
 * minutes, so a page hammering the bridge must not grow dev-core without bound.
 * @defaultValue 10000
 */
export const MAX_AUTHORIZATION_CODES = 10_000;

/** The scope that grants an app chat: only a grant holding it earns a token whose audience is chat. */
export const CHAT_SCOPE = 'chat';

/** Scopes with this prefix are core's own; granted, they also earn a core resource token. */
const CORE_SCOPE_PREFIX = 'core:';

/** A handoff request refused; never turned into a redirect. `code` is core's error code. */
export class OAuthRequestError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 503,
    readonly code: string,
    message: string,
    readonly parameter?: string,
  ) {
    super(message);
    this.name = 'OAuthRequestError';
  }
}

const single = z.string().max(4096);
const visibleAscii = /^[\x20-\x7e]+$/;

/** Query parameters of `GET /api/marketplace/oauth/authorize` (RFC 6749 section 4.1.1, RFC 7636 section 4.3). */
const authorizeParamsSchema = z.object({
  response_type: single.optional(),
  client_id: single,
  redirect_uri: single,
  scope: single.optional(),
  state: z.string().min(1).max(1024).regex(visibleAscii, 'must be visible ASCII'),
  code_challenge: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the 43-character base64url SHA-256 of the verifier'),
  code_challenge_method: single,
});

/** Body of `POST /api/marketplace/oauth/token` (RFC 6749 section 4.1.3, RFC 7636 section 4.5). */
const tokenBodySchema = z.object({
  grant_type: single,
  code: single,
  redirect_uri: single,
  client_id: single,
  code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/, 'must be 43-128 unreserved characters'),
});

/** What a successful authorization answers, and nothing else. */
export interface AuthorizationGrant {
  redirectUri: string;
  code: string;
  state: string;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  core_access_token?: string;
}

interface CodeRecord {
  clientId: string;
  redirectUri: string;
  userId: string;
  scopes: string[];
  challenge: string;
  expiresAt: number;
  used: boolean;
  /** `jti`s issued from this code, revoked if the code is ever replayed (RFC 6749 section 4.1.2). */
  tokenIds: string[];
}

export interface MarketplaceOAuthDeps extends TokenMinterDeps {
  store: FixtureStore;
  now: () => number;
  /** Authorization codes held at once. @defaultValue MAX_AUTHORIZATION_CODES */
  maxCodes?: number;
}

/** Rejects anything but one string per parameter: a repeated parameter is ambiguous, so refused. */
function parseParams<T>(schema: z.ZodType<T>, raw: Record<string, unknown>): T {
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string') throw new OAuthRequestError(400, 'request_invalid', `${name} must be given once, as a string`, name);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? '');
    throw new OAuthRequestError(400, 'request_invalid', `${name}: ${issue.message}`, name);
  }
  return parsed.data;
}

function s256(verifier: string): Buffer {
  return createHash('sha256').update(verifier, 'ascii').digest();
}

/**
 * Core's side of the marketplace OAuth handoff: authorization codes issued to a signed-in human for
 * an installed app, exchanged once with the PKCE verifier for a chat token.
 */
export class MarketplaceOAuth {
  readonly #codes = new Map<string, CodeRecord>();
  readonly #deps: MarketplaceOAuthDeps;

  constructor(deps: MarketplaceOAuthDeps) {
    this.#deps = deps;
  }

  #app(clientId: string): FixtureApp | undefined {
    return this.#deps.store.current.apps?.find((a) => a.clientId === clientId);
  }

  /** Scopes both declared by the app and present on the user's active installation, in the app's order. */
  #grantable(app: FixtureApp, userId: string): string[] | undefined {
    const installation = this.#deps.store.current.installations?.find(
      (i) => i.clientId === app.clientId && i.userId === userId && i.state === 'active',
    );
    if (installation === undefined) return undefined;
    return app.scopes.filter((s) => installation.scopes.includes(s));
  }

  /** Validates an authorization request for `userId` (from the core session) and issues a code. */
  authorize(userId: string, raw: Record<string, unknown>): AuthorizationGrant {
    const params = parseParams(authorizeParamsSchema, raw);
    if (params.response_type !== undefined && params.response_type !== 'code') {
      throw new OAuthRequestError(400, 'request_invalid', 'response_type must be code', 'response_type');
    }
    if (params.code_challenge_method !== 'S256') {
      throw new OAuthRequestError(400, 'request_invalid', 'code_challenge_method must be S256', 'code_challenge_method');
    }
    const app = this.#app(params.client_id);
    if (app === undefined) throw new OAuthRequestError(400, 'client_unknown', 'no such registered app', 'client_id');
    if (params.redirect_uri !== app.redirectUri) {
      throw new OAuthRequestError(400, 'redirect_uri_mismatch', 'redirect_uri is not the exact registered callback', 'redirect_uri');
    }
    let requested: string[] | undefined;
    if (params.scope !== undefined) {
      requested = params.scope.split(' ').filter((s) => s !== '');
      if (requested.some((s) => !scopeSchema.safeParse(s).success)) {
        throw new OAuthRequestError(400, 'request_invalid', 'scope must be space-separated scope names', 'scope');
      }
    }
    const grantable = this.#grantable(app, userId);
    if (grantable === undefined) throw new OAuthRequestError(403, 'installation_inactive', 'the app is not installed for this user');
    const scopes = requested === undefined ? grantable : grantable.filter((s) => requested.includes(s));
    if (scopes.length === 0) throw new OAuthRequestError(403, 'scope_denied', 'none of the requested scopes can be granted', 'scope');

    this.#sweep();
    if (this.#codes.size >= (this.#deps.maxCodes ?? MAX_AUTHORIZATION_CODES)) {
      throw new OAuthRequestError(503, 'temporarily_unavailable', 'too many authorization codes are outstanding; retry once some have expired');
    }
    const code = randomBytes(32).toString('base64url');
    this.#codes.set(code, {
      clientId: app.clientId,
      redirectUri: app.redirectUri,
      userId,
      scopes,
      challenge: params.code_challenge,
      expiresAt: this.#deps.now() + AUTHORIZATION_CODE_TTL_MS,
      used: false,
      tokenIds: [],
    });
    return { redirectUri: app.redirectUri, code, state: params.state };
  }

  /**
   * Exchanges a code for tokens. Any attempt uses the code up, so a stolen code cannot be retried
   * against the verifier; a replayed code revokes the tokens it already gave. `origin` is the
   * browser page's `Origin`, when there is one: it must be the origin of the code's callback.
   */
  async exchange(raw: Record<string, unknown>, origin?: string): Promise<TokenAnswer> {
    const body = parseParams(tokenBodySchema, raw);
    if (body.grant_type !== 'authorization_code') {
      throw new OAuthRequestError(400, 'unsupported_grant_type', 'grant_type must be authorization_code', 'grant_type');
    }
    const record = this.#codes.get(body.code);
    if (record === undefined) throw new OAuthRequestError(400, 'invalid_grant', 'unknown or expired code');
    if (record.used) {
      for (const jti of record.tokenIds) this.#deps.store.revoke({ jti });
      throw new OAuthRequestError(400, 'invalid_grant', 'code already used; the tokens it gave are revoked');
    }
    record.used = true;
    if (record.expiresAt <= this.#deps.now()) throw new OAuthRequestError(400, 'invalid_grant', 'unknown or expired code');
    if (body.client_id !== record.clientId || body.redirect_uri !== record.redirectUri) {
      throw new OAuthRequestError(400, 'invalid_grant', 'code was issued to another client or redirect_uri');
    }
    if (origin !== undefined && origin !== new URL(record.redirectUri).origin) {
      throw new OAuthRequestError(400, 'invalid_grant', "code was issued to another app's origin");
    }
    const expected = Buffer.from(record.challenge, 'ascii');
    const actual = Buffer.from(s256(body.code_verifier).toString('base64url'), 'ascii');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      throw new OAuthRequestError(400, 'invalid_grant', 'code_verifier does not match the code_challenge');
    }
    // Installation and app are checked again: an uninstall between authorize and exchange wins.
    const app = this.#app(record.clientId);
    const grantable = app?.redirectUri === record.redirectUri ? this.#grantable(app, record.userId) : undefined;
    const scopes = grantable === undefined ? [] : record.scopes.filter((s) => grantable.includes(s));
    if (scopes.length === 0) throw new OAuthRequestError(400, 'invalid_grant', 'the app is no longer installed with these scopes');

    // A token is accepted only by the API its audience names, so each audience needs its own grant:
    // chat's token only for a grant that holds the chat scope, core's only for one with core scopes.
    const coreScopes = scopes.filter((s) => s.startsWith(CORE_SCOPE_PREFIX));
    if (!scopes.includes(CHAT_SCOPE) && coreScopes.length === 0) {
      throw new OAuthRequestError(400, 'invalid_scope', 'the grant holds no scope of an API that accepts tokens');
    }
    const scope = scopes.join(' ');
    const common = { subjectId: record.userId, clientId: record.clientId, expiresInSeconds: HANDOFF_TOKEN_TTL_SECONDS };
    const mint = async (type: 'human' | 'core_resource', tokenScope: string) => {
      const token = await mintToken(this.#deps, { ...common, type, scope: tokenScope });
      record.tokenIds.push(String(decodeJwt(token).jti));
      return token;
    };
    const coreToken = coreScopes.length > 0 ? await mint('core_resource', coreScopes.join(' ')) : undefined;
    const accessToken = scopes.includes(CHAT_SCOPE) ? await mint('human', scope) : coreToken!;
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: HANDOFF_TOKEN_TTL_SECONDS,
      scope,
      ...(coreToken === undefined ? {} : { core_access_token: coreToken }),
    };
  }

  /** Authorization codes held now, used ones included. */
  get outstandingCodes(): number {
    return this.#codes.size;
  }

  /**
   * Forgets codes past their expiry; a used one is kept until then to recognise its replay. Codes
   * are held in the order they were issued and all live equally long, so the expired ones lead.
   */
  #sweep(): void {
    const now = this.#deps.now();
    for (const [code, record] of this.#codes) {
      if (record.expiresAt > now) break;
      this.#codes.delete(code);
    }
  }
}
