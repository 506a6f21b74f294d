import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

/** The token issuers dev-core plays; each signs with its own key and publishes its own JWKS. */
export const ISSUERS = ['marketplace', 'bots', 'idp'] as const;
export type IssuerName = (typeof ISSUERS)[number];

export interface IssuerKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** One ES256 key pair per issuer, made at start and held only in memory. */
export type IssuerKeys = Readonly<Record<IssuerName, IssuerKey>>;

async function generateIssuerKey(): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { kid, privateKey, publicJwk: { ...jwk, kid, alg: 'ES256', use: 'sig' } };
}

/** Generates a fresh key for every issuer. */
export async function generateIssuerKeys(): Promise<IssuerKeys> {
  const [marketplace, bots, idp] = await Promise.all(ISSUERS.map(() => generateIssuerKey()));
  return { marketplace: marketplace!, bots: bots!, idp: idp! };
}

/** The public JWK Set of one issuer. */
export function jwksOf(keys: IssuerKeys, issuer: IssuerName): { keys: JWK[] } {
  return { keys: [keys[issuer].publicJwk] };
}

/** The `iss` value of an issuer: its path under dev-core's public base URL. */
export function issuerUrl(publicUrl: string, issuer: IssuerName): string {
  return `${publicUrl}/${issuer}`;
}
