/**
 * Who a verified bearer token speaks for, and until when. A human token also names itself (`tokenId`,
 * its `jti`) and the marketplace app it was issued to (`clientId`, its `client_id`), which core's
 * authorization is told on every request so a revoked token or an uninstalled app stops working.
 */
export type VerifiedPrincipal =
  | { kind: 'user'; id: string; expiresAt: Date; tokenId?: string }
  | { kind: 'bot'; id: string; credentialId: string; expiresAt: Date; tokenId?: string };
