import { randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

/** The token issuers dev-core plays; each signs with its own key and publishes its own JWKS. */
export const ISSUERS = ['marketplace', 'bots', 'idp'] as const;
export type IssuerName = (typeof ISSUERS)[number];

export interface IssuerKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** One ES256 key pair per issuer, made at start or loaded from the keys folder. */
export type IssuerKeys = Readonly<Record<IssuerName, IssuerKey>>;

async function issuerKeyOf(privateKey: CryptoKey, publicJwk: JWK): Promise<IssuerKey> {
  const kid = await calculateJwkThumbprint(publicJwk);
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' } };
}

async function generateIssuerKey(): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return issuerKeyOf(privateKey, await exportJWK(publicKey));
}

/** Generates a fresh key for every issuer. */
export async function generateIssuerKeys(): Promise<IssuerKeys> {
  const [marketplace, bots, idp] = await Promise.all(ISSUERS.map(() => generateIssuerKey()));
  return { marketplace: marketplace!, bots: bots!, idp: idp! };
}

/** The file in the keys folder: each issuer's private JWK. */
export const SIGNING_KEYS_FILE = 'signing-keys.json';

/**
 * The issuers' keys kept in `keysDir`, so that the tokens dev-core signed stay valid after it
 * restarts: loaded when the folder has them, else made and written (readable by the owner only).
 * The file appears whole or not at all (a hard link of a fully written, synced file), and never
 * replaces one that is there: two dev-cores starting at once on one empty folder both end up with
 * the keys the first one wrote.
 */
export async function loadOrCreateIssuerKeys(keysDir: string): Promise<IssuerKeys> {
  const path = join(keysDir, SIGNING_KEYS_FILE);
  const found = await readKeysFile(path);
  if (found) return found;
  await mkdir(keysDir, { recursive: true, mode: 0o700 });
  const keys = await generateIssuerKeys();
  const draft = join(keysDir, `.${SIGNING_KEYS_FILE}.${process.pid}.${randomUUID()}`);
  const file = await open(draft, 'wx', 0o600);
  try {
    const jwks = Object.fromEntries(await Promise.all(ISSUERS.map(async (issuer) => [issuer, await exportJWK(keys[issuer].privateKey)] as const)));
    await file.writeFile(JSON.stringify(jwks, null, 2) + '\n');
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await link(draft, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(draft, { force: true });
  }
  // The keys that are in the file now: these, or those of a dev-core that wrote first.
  return (await readKeysFile(path))!;
}

/** The keys in `path`; undefined when there is no file. A file that holds no usable keys stops the start. */
async function readKeysFile(path: string): Promise<IssuerKeys | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const jwks = JSON.parse(text) as Partial<Record<IssuerName, JWK>>;
    const entries = await Promise.all(
      ISSUERS.map(async (issuer) => {
        const jwk = jwks[issuer];
        if (jwk?.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string') throw new Error(`no ES256 private key for ${issuer}`);
        const publicJwk: JWK = { kty: jwk.kty, crv: jwk.crv, x: jwk.x!, y: jwk.y! };
        return [issuer, await issuerKeyOf((await importJWK(jwk, 'ES256')) as CryptoKey, publicJwk)] as const;
      }),
    );
    return Object.fromEntries(entries) as Record<IssuerName, IssuerKey>;
  } catch (err) {
    throw new Error(`dev-core's signing keys in ${path} are unusable (${(err as Error).message}); remove the file to make new keys (tokens signed with the old ones are then refused)`);
  }
}

/** The public JWK Set of one issuer. */
export function jwksOf(keys: IssuerKeys, issuer: IssuerName): { keys: JWK[] } {
  return { keys: [keys[issuer].publicJwk] };
}

/** The `iss` value of an issuer: its path under dev-core's public base URL. */
export function issuerUrl(publicUrl: string, issuer: IssuerName): string {
  return `${publicUrl}/${issuer}`;
}
