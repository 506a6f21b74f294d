import { SignJWT } from 'jose';
import { newUlid } from '@chat/contracts';
import type { FixtureStore } from './fixture-store.ts';
import { issuerUrl, type IssuerKeys, type IssuerName } from './signing-keys.ts';

/** The token kinds `POST /dev/tokens` can mint (docs/core-contract.md, "dev-core"). */
export const TOKEN_TYPES = ['human', 'bot', 'core_resource', 'id_token', 'app'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export interface MintTokenRequest {
  type: TokenType;
  /** User ID, or bot ID for `bot`. */
  subjectId: string;
  /** Bot credential; for `bot` only. @defaultValue the bot's first active credential */
  credentialId?: string;
  /** Lifetime; negative values mint an already expired token. @defaultValue 3600 */
  expiresInSeconds?: number;
  /**
   * The marketplace app the token is issued to (`client_id`); for `human`, `core_resource` and `app`.
   * @defaultValue 'dev-core-demo-app'
   */
  clientId?: string;
  /**
   * The `scope` claim of a human or core resource token; for the OAuth handoff, not offered by
   * `POST /dev/tokens`. @defaultValue the kind's development scope (`chat`, `core:mentions`)
   */
  scope?: string;
}

/** A mint request naming something the fixture does not hold. */
export class TokenRequestInvalidError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenRequestInvalidError';
  }
}

interface TokenProfile {
  issuer: IssuerName;
  typ: string;
  audience: string;
  extraClaims: Record<string, unknown>;
}

/** The dev marketplace app that holds the human's chat and core grants. */
const DEV_CLIENT_ID = 'dev-core-demo-app';

const PROFILES: Readonly<Record<Exclude<TokenType, 'bot'>, TokenProfile>> = {
  human: { issuer: 'marketplace', typ: 'at+jwt', audience: 'chat', extraClaims: { scope: 'chat', client_id: DEV_CLIENT_ID } },
  core_resource: { issuer: 'marketplace', typ: 'at+jwt', audience: 'core', extraClaims: { scope: 'core:mentions', client_id: DEV_CLIENT_ID } },
  id_token: { issuer: 'idp', typ: 'JWT', audience: 'core-web', extraClaims: {} },
  app: { issuer: 'marketplace', typ: 'app+jwt', audience: 'marketplace', extraClaims: { client_id: DEV_CLIENT_ID } },
};

export interface TokenMinterDeps {
  keys: IssuerKeys;
  store: FixtureStore;
  publicUrl: () => string;
}

/** Picks the credential a bot token is bound to; a revoked one is allowed so tests can show its rejection. */
function botCredential(deps: TokenMinterDeps, botId: string, credentialId: string | undefined): string {
  const bot = deps.store.findBot(botId);
  if (!bot) throw new TokenRequestInvalidError(`unknown bot ${botId}`);
  if (credentialId === undefined) {
    const active = bot.credentials.find((c) => c.state === 'active');
    if (!active) throw new TokenRequestInvalidError(`bot ${botId} has no active credential`);
    return active.id;
  }
  if (!bot.credentials.some((c) => c.id === credentialId)) {
    throw new TokenRequestInvalidError(`bot ${botId} has no credential ${credentialId}`);
  }
  return credentialId;
}

/** Signs a token of the requested kind for a subject of the live fixture. */
export async function mintToken(deps: TokenMinterDeps, request: MintTokenRequest): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const lifetime = request.expiresInSeconds ?? 3600;
  let issuer: IssuerName;
  let typ: string;
  let audience: string;
  let claims: Record<string, unknown>;
  if (request.type === 'bot') {
    const cid = botCredential(deps, request.subjectId, request.credentialId);
    issuer = 'bots';
    typ = 'bot+jwt';
    audience = 'chat';
    if (request.clientId !== undefined) throw new TokenRequestInvalidError('clientId is not for bot tokens');
    claims = { cid };
  } else {
    if (request.credentialId !== undefined) throw new TokenRequestInvalidError('credentialId is for bot tokens only');
    if (!deps.store.isKnownUser(request.subjectId)) throw new TokenRequestInvalidError(`unknown user ${request.subjectId}`);
    if (request.clientId !== undefined && request.type === 'id_token') throw new TokenRequestInvalidError('clientId is not for ID tokens');
    ({ issuer, typ, audience, extraClaims: claims } = PROFILES[request.type]);
    if (request.clientId !== undefined) claims = { ...claims, client_id: request.clientId };
    if (request.scope !== undefined) claims = { ...claims, scope: request.scope };
  }
  const key = deps.keys[issuer];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', typ, kid: key.kid })
    .setIssuer(issuerUrl(deps.publicUrl(), issuer))
    .setAudience(audience)
    .setSubject(request.subjectId)
    .setIssuedAt(now)
    .setExpirationTime(now + lifetime)
    .setJti(newUlid())
    .sign(key.privateKey);
}
