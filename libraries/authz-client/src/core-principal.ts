import type { CorePrincipal } from './core-contract.schema.ts';
import type { VerifiedPrincipal } from './verified-principal.ts';

/**
 * The caller as core is told it on every call: with its token's identifiers, so core refuses a
 * revoked token, an uninstalled app's token or a revoked credential each time (the verified-token
 * cache only spares the signature check, never core's).
 */
export function corePrincipalOf(principal: VerifiedPrincipal): CorePrincipal {
  return principal.kind === 'bot'
    ? { kind: 'bot', id: principal.id, credentialId: principal.credentialId, ...(principal.tokenId === undefined ? {} : { tokenId: principal.tokenId }) }
    : { kind: 'user', id: principal.id, tokenId: principal.tokenId, clientId: principal.clientId };
}
