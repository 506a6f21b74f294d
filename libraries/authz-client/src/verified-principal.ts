/**
 * Who a verified bearer token speaks for, and until when. A human token also names itself (`tokenId`,
 * its `jti`) and the marketplace app it was issued to (`clientId`, its `client_id`); core's
 * authorization is told both on every request, so a revoked token or one of an uninstalled app stops
 * working at its next request. A bot token's `jti` goes along when it has one; a bot's credential is
 * what core revokes.
 */
export type VerifiedPrincipal =
  | { kind: 'user'; id: string; expiresAt: Date; tokenId: string; clientId: string }
  | { kind: 'bot'; id: string; credentialId: string; expiresAt: Date; tokenId?: string };
