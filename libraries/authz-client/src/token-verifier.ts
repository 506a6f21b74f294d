import { AppError } from '@chat/contracts';
import {
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWSHeaderParameters,
  type JWTVerifyGetKey,
} from 'jose';
import { extractBearerToken, tokenRejected } from './bearer-header.ts';
import { coreEndpoints } from './core-endpoints.ts';
import type { VerifiedPrincipal } from './verified-principal.ts';
import { VerifiedTokenCache } from './verified-token-cache.ts';

interface TokenVerifierOptions {
  /** Core's base URL; issuers and key sets are derived from it (docs/core-contract.md). */
  coreUrl: string;
  /** The `aud` a token must carry to be meant for chat. @defaultValue 'chat' */
  chatAudience?: string;
  /**
   * The scope a human token's `scope` claim must list: the marketplace grant that lets an app use
   * chat. A token of a grant without it (an app granted only core's scopes) is refused.
   * @defaultValue 'chat'
   */
  chatScope?: string;
  /** Clock skew allowed on `exp`, `nbf` and `iat`. @defaultValue 5 */
  clockToleranceSeconds?: number;
  /** Time allowed to fetch a key set before answering 503. @defaultValue 2000 */
  jwksTimeoutMs?: number;
  /** fetch used for the key sets. @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /**
   * How long a verified token is remembered (never past its `exp`); 0 verifies every request.
   * @defaultValue 60000
   */
  verifiedCacheTtlMs?: number;
  /** At most this many verified tokens are remembered. @defaultValue 10000 */
  verifiedCacheMaxEntries?: number;
}

export interface TokenVerifier {
  /** Verifies an `Authorization` header value; throws AppError on any refusal. */
  verify(authorizationHeader: string | undefined): Promise<VerifiedPrincipal>;
}

/** Protected header parameters a token may carry; anything else (jku, x5u, jwk, x5c, crit, b64…) is refused. */
const ALLOWED_HEADER_PARAMETERS = new Set(['alg', 'typ', 'kid']);

/** Marks a failure to obtain core's keys, as opposed to a token that does not match them. */
class KeySetUnavailableError extends Error {
  constructor(cause: unknown) {
    super('core key set unavailable', { cause });
    this.name = 'KeySetUnavailableError';
  }
}

/** Wraps a remote key set so that fetch, timeout and parse failures are told apart from unknown kids. */
function guardedKeySet(url: URL, timeoutMs: number, fetchImpl: typeof fetch | undefined): JWTVerifyGetKey {
  const remote = createRemoteJWKSet(url, {
    timeoutDuration: timeoutMs,
    ...(fetchImpl === undefined ? {} : { [customFetch]: fetchImpl }),
  });
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw err;
      throw new KeySetUnavailableError(err);
    }
  };
}

function normalizedTyp(typ: unknown): string | undefined {
  if (typeof typ !== 'string') return undefined;
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

/** The protected header, when it is one chat accepts at all; the token class follows from its `typ`. */
function classify(token: string): { tokenClass: 'user' | 'bot' } {
  let header: JWSHeaderParameters;
  try {
    header = decodeProtectedHeader(token) as JWSHeaderParameters;
  } catch {
    throw tokenRejected();
  }
  const unexpected = Object.keys(header).some((name) => !ALLOWED_HEADER_PARAMETERS.has(name));
  if (unexpected || header.alg !== 'ES256' || typeof header.kid !== 'string' || header.kid.length === 0) {
    throw tokenRejected();
  }
  const typ = normalizedTyp(header.typ);
  if (typ === 'at+jwt') return { tokenClass: 'user' };
  if (typ === 'bot+jwt') return { tokenClass: 'bot' };
  throw tokenRejected();
}

/** Whether a space-separated `scope` claim (RFC 9068 section 2.2.3) lists `wanted`. */
function grantsScope(scope: unknown, wanted: string): boolean {
  return typeof scope === 'string' && scope.split(' ').includes(wanted);
}

function isNonEmptyId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 128;
}

/**
 * Verifies chat's two bearer schemes against core's issuers. Classification is terminal: the `typ`
 * header picks human (`at+jwt`, marketplace issuer) or bot (`bot+jwt`, bots issuer), and the token is
 * then checked against that class alone; failing it never falls through to the other. ES256 only;
 * `iss`, `aud`, `exp`, `sub` required, and `jti`, `client_id` and the chat scope on a human token
 * (a token core could not revoke is refused, and so is one whose grant does not include chat). Key sets are fetched and cached by jose (refetched on an unknown
 * `kid` at most once per cooldown). Refusals are `TOKEN_REJECTED`; an unreachable key set is
 * `AUTHORIZATION_UNAVAILABLE`. No error message carries the token.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const endpoints = coreEndpoints(options.coreUrl);
  const audience = options.chatAudience ?? 'chat';
  const chatScope = options.chatScope ?? 'chat';
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  const timeoutMs = options.jwksTimeoutMs ?? 2000;
  const classes = {
    user: {
      keys: guardedKeySet(endpoints.marketplaceJwks, timeoutMs, options.fetch),
      issuer: endpoints.marketplaceIssuer,
      typ: 'at+jwt',
      // jti and client_id are what core's authorization revokes a human token by (docs/core-contract.md).
      requiredClaims: ['iss', 'aud', 'exp', 'sub', 'jti', 'client_id', 'scope'],
    },
    bot: {
      keys: guardedKeySet(endpoints.botsJwks, timeoutMs, options.fetch),
      issuer: endpoints.botsIssuer,
      typ: 'bot+jwt',
      requiredClaims: ['iss', 'aud', 'exp', 'sub', 'cid'],
    },
  } as const;

  const verified = new VerifiedTokenCache({ ttlMs: options.verifiedCacheTtlMs ?? 60_000, maxEntries: options.verifiedCacheMaxEntries ?? 10_000 });

  return {
    async verify(authorizationHeader) {
      const token = extractBearerToken(authorizationHeader);
      const known = verified.get(token);
      if (known) return known;
      const principal = await verifyToken(token);
      verified.set(token, principal);
      return principal;
    },
  };

  async function verifyToken(token: string): Promise<VerifiedPrincipal> {
    const { tokenClass } = classify(token);
    const expected = classes[tokenClass];
    let payload;
    try {
      ({ payload } = await jwtVerify(token, expected.keys, {
        algorithms: ['ES256'],
        issuer: expected.issuer,
        audience,
        typ: expected.typ,
        clockTolerance,
        requiredClaims: [...expected.requiredClaims],
      }));
    } catch (err) {
      if (err instanceof KeySetUnavailableError) {
        throw new AppError('AUTHORIZATION_UNAVAILABLE', 'Token verification is unavailable.', { cause: err.cause });
      }
      // jose's errors name the failed check, never the token; keep only that for the log.
      throw tokenRejected(err instanceof errors.JOSEError ? `${err.code}: ${err.message}` : 'verification failed');
    }
    if (!isNonEmptyId(payload.sub) || typeof payload.exp !== 'number') throw tokenRejected('subject invalid');
    const expiresAt = new Date(payload.exp * 1000);
    if (tokenClass === 'user') {
      const clientId = payload['client_id'];
      if (!isNonEmptyId(payload.jti) || !isNonEmptyId(clientId)) throw tokenRejected('token id or client id invalid');
      // The audience says the token is for chat; the scope says the human granted the app chat. An
      // app granted only core's scopes holds no chat access, whatever its token's audience.
      if (!grantsScope(payload['scope'], chatScope)) throw tokenRejected('scope lacks the chat scope');
      return { kind: 'user', id: payload.sub, expiresAt, tokenId: payload.jti, clientId };
    }
    const credentialId = payload['cid'];
    if (!isNonEmptyId(credentialId)) throw tokenRejected('credential id invalid');
    return { kind: 'bot', id: payload.sub, credentialId, expiresAt, ...(isNonEmptyId(payload.jti) ? { tokenId: payload.jti } : {}) };
  }
}
