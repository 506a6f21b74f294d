import { createLocalJWKSet, jwtVerify } from 'jose';
import type { FixtureStore, TokenIdentity } from './fixture-store.ts';
import { issuerUrl, jwksOf, type IssuerKeys } from './signing-keys.ts';

export interface ResourceTokenDeps {
  keys: IssuerKeys;
  publicUrl: () => string;
}

/** Audience of core's own resource API; chat forwards these tokens and never verifies them itself. */
export const CORE_RESOURCE_AUDIENCE = 'core';

/** The sender of a message, as chat names it to mention resolution. */
export interface MentionAuthor {
  kind: 'user' | 'bot';
  id: string;
}

/** A verified core resource token: its identifiers and the scopes of its `scope` claim. */
export interface ResourceTokenIdentity extends TokenIdentity {
  scopes: string[];
}

/**
 * Verifies a `Bearer <core_resource token>` header value and returns who it speaks for and its
 * identifiers, or undefined when it is malformed, forged, expired, or a token of another kind.
 */
export async function verifyResourceToken(deps: ResourceTokenDeps, headerValue: string): Promise<ResourceTokenIdentity | undefined> {
  const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(headerValue.trim());
  if (!match?.[1] || match[1].length > 8192) return undefined;
  try {
    const { payload } = await jwtVerify(match[1], createLocalJWKSet(jwksOf(deps.keys, 'marketplace')), {
      algorithms: ['ES256'],
      issuer: issuerUrl(deps.publicUrl(), 'marketplace'),
      audience: CORE_RESOURCE_AUDIENCE,
      typ: 'at+jwt',
      requiredClaims: ['exp', 'sub'],
    });
    if (typeof payload.sub !== 'string' || payload.sub.length === 0) return undefined;
    const clientId = payload['client_id'];
    const scope = payload['scope'];
    return {
      subjectId: payload.sub,
      tokenId: payload.jti,
      clientId: typeof clientId === 'string' ? clientId : undefined,
      scopes: typeof scope === 'string' ? scope.split(' ').filter((s) => s !== '') : [],
    };
  } catch {
    return undefined;
  }
}

/**
 * Whether a resource token may be used for a mention lookup by `author`: it must verify, be
 * unrevoked, and speak for that very person. A token of someone else gets the same refusal as a
 * forged or expired one, so a caller holding a stolen token cannot learn whether it is still valid.
 */
export async function resourceTokenOfAuthor(
  deps: ResourceTokenDeps,
  store: FixtureStore,
  headerValue: string,
  author: MentionAuthor | undefined,
): Promise<boolean> {
  const token = await verifyResourceToken(deps, headerValue);
  return token !== undefined && author?.kind === 'user' && author.id === token.subjectId && !store.isRevoked(token);
}

/**
 * The person a marketplace app's core resource token speaks for, when it may be used on an endpoint
 * that needs `scope`: it verifies, is unrevoked, lists the scope, and its app is not uninstalled for
 * that person. Undefined otherwise, whatever the cause, so the caller answers every refusal alike.
 */
export async function appResourceToken(
  deps: ResourceTokenDeps & { store: FixtureStore },
  headerValue: string,
  scope: string,
): Promise<ResourceTokenIdentity | undefined> {
  const token = await verifyResourceToken(deps, headerValue);
  if (token === undefined || deps.store.isRevoked(token) || !token.scopes.includes(scope)) return undefined;
  const installation = deps.store.current.installations?.find((i) => i.clientId === token.clientId && i.userId === token.subjectId);
  return installation?.state === 'uninstalled' ? undefined : token;
}
