import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';

interface Key {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function newKey(): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { kid, privateKey, jwk: { ...jwk, kid, alg: 'ES256', use: 'sig' } };
}

/**
 * A core-shaped issuer whose private keys the test holds, so it can sign tokens with any claims and
 * headers. It publishes key sets at the contract's paths, like a real core; it lets the token matrix
 * prove that checks beyond the signature (nbf, exp, aud, iss, typ, size) refuse validly signed tokens.
 */
export interface TestIssuer {
  url: string;
  keys: { marketplace: Key; bots: Key };
  /** Signs `claims` with the named issuer's key; `header` overrides the protected header. */
  sign(issuer: 'marketplace' | 'bots', claims: JWTPayload, header?: Record<string, unknown>): Promise<string>;
  /** Number of key set requests served so far. */
  jwksRequests(): number;
  close(): Promise<void>;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const keys = { marketplace: await newKey(), bots: await newKey() };
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const match = /^\/issuers\/(marketplace|bots)\/jwks\.json$/.exec(req.url ?? '');
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    requests += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [keys[match[1] as 'marketplace' | 'bots'].jwk] }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    keys,
    sign: (issuer, claims, header = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: issuer === 'bots' ? 'bot+jwt' : 'at+jwt', kid: keys[issuer].kid, ...header })
        .sign(keys[issuer].privateKey),
    jwksRequests: () => requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Claims of a valid human token for `issuerUrl`, lasting ten minutes. */
export function humanClaims(issuerUrl: string, overrides: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return { iss: `${issuerUrl}/marketplace`, aud: 'chat', sub: 'u_alice', iat: now, exp: now + 600, jti: 'j1', client_id: 'test-app', scope: 'chat', ...overrides };
}

/** Claims of a valid bot token for `issuerUrl`, lasting ten minutes. */
export function botClaims(issuerUrl: string, overrides: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return { iss: `${issuerUrl}/bots`, aud: 'chat', sub: 'b_ci', cid: 'c_1', iat: now, exp: now + 600, ...overrides };
}
