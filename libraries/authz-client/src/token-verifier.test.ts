import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { CompactEncrypt, exportJWK, exportSPKI, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { pino } from 'pino';
import { createTokenVerifier, type TokenVerifier } from './token-verifier.ts';
import { botClaims, humanClaims, startTestIssuer, type TestIssuer } from '../test/test-issuer.ts';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const bearer = (token: string) => `Bearer ${token}`;

async function rejection(verifier: TokenVerifier, header: string | undefined): Promise<AppError> {
  try {
    await verifier.verify(header);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('token was accepted');
}

describe('createTokenVerifier', () => {
  let core: DevCoreHandle;
  let otherCore: DevCoreHandle;
  let issuer: TestIssuer;
  let devVerifier: TokenVerifier;
  let issuerVerifier: TokenVerifier;
  let marketplaceJwk: JWK;

  before(async () => {
    const logger = pino({ level: 'silent' });
    [core, otherCore, issuer] = await Promise.all([
      startDevCore({ port: 0, logger }),
      startDevCore({ port: 0, logger }),
      startTestIssuer(),
    ]);
    devVerifier = createTokenVerifier({ coreUrl: core.url });
    issuerVerifier = createTokenVerifier({ coreUrl: `${issuer.url}/` });
    const jwks = (await (await fetch(`${core.url}/issuers/marketplace/jwks.json`)).json()) as { keys: JWK[] };
    marketplaceJwk = jwks.keys[0]!;
  });
  after(() => Promise.all([core.close(), otherCore.close(), issuer.close()]));

  describe('valid control tokens', () => {
    it('accepts a dev-core human token as the user', async () => {
      const token = await core.mintToken({ type: 'human', subjectId: 'u_alice' });
      const principal = await devVerifier.verify(bearer(token));
      expect(principal).to.include({ kind: 'user', id: 'u_alice' });
      expect(principal.expiresAt.getTime()).to.be.closeTo(Date.now() + 3600_000, 5000);
      expect(principal).to.include({ clientId: 'dev-core-demo-app' });
      expect(principal.tokenId).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    });

    it('accepts a dev-core bot token as the bot and its credential', async () => {
      const token = await core.mintToken({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_1', expiresInSeconds: 120 });
      const principal = await devVerifier.verify(`bearer  ${token}`);
      expect(principal).to.include({ kind: 'bot', id: 'b_ci', credentialId: 'c_1' });
      expect(principal.expiresAt.getTime()).to.be.closeTo(Date.now() + 120_000, 5000);
    });

    it('accepts validly signed tokens of the test issuer, also just past exp within the clock tolerance', async () => {
      const now = Math.floor(Date.now() / 1000);
      for (const token of [
        await issuer.sign('marketplace', humanClaims(issuer.url)),
        await issuer.sign('marketplace', humanClaims(issuer.url, { exp: now - 2, aud: ['chat', 'other'] })),
        await issuer.sign('bots', botClaims(issuer.url)),
        await issuer.sign('marketplace', humanClaims(issuer.url), { typ: 'application/at+jwt' }),
        await issuer.sign('marketplace', humanClaims(issuer.url, { scope: 'core:commits:read chat' })),
      ]) {
        expect((await issuerVerifier.verify(bearer(token))).id).to.be.a('string');
      }
    });
  });

  it('answers AUTHENTICATION_REQUIRED when there is no credential', async () => {
    for (const header of [undefined, '', '   ']) {
      expect((await rejection(devVerifier, header)).code).to.equal('AUTHENTICATION_REQUIRED');
    }
  });

  describe('the JWT matrix (reliability test 12): every case is TOKEN_REJECTED', () => {
    type Case = [name: string, make: () => Promise<string>, verifier?: 'issuer'];
    const now = () => Math.floor(Date.now() / 1000);
    const attackerKey = () => generateKeyPair('ES256', { extractable: true });
    const devClaims = () => humanClaims(core.url);
    const signWith = async (header: Record<string, unknown>, claims = devClaims()) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...header }).sign((await attackerKey()).privateKey);
    const hs256 = (secret: string | Buffer, claims = devClaims()) => {
      const input = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: marketplaceJwk.kid })}.${b64(claims)}`;
      return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
    };

    const cases: Case[] = [
      ['Basic credentials', async () => `Basic ${Buffer.from('u_alice:secret').toString('base64')}`],
      ['another scheme', async () => `Token ${await core.mintToken({ type: 'human', subjectId: 'u_alice' })}`],
      ['Bearer without a token', async () => 'Bearer'],
      ['two tokens in one header', async () => bearer(`${await core.mintToken({ type: 'human', subjectId: 'u_alice' })} x.y.z`)],
      ['not a JWT', async () => bearer('opaque-token-value')],
      ['alg none, empty signature', async () => bearer(`${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(devClaims())}.`)],
      ['alg none with kid and a signature', async () => bearer(`${b64({ alg: 'none', typ: 'at+jwt', kid: marketplaceJwk.kid })}.${b64(devClaims())}.AAAA`)],
      ['HS256 keyed with the public key PEM', async () => bearer(hs256(await exportSPKI((await importJWK(marketplaceJwk, 'ES256', { extractable: true })) as CryptoKey)))],
      ['HS256 keyed with the public JWK JSON', async () => bearer(hs256(JSON.stringify(marketplaceJwk)))],
      ['HS256 keyed with the x coordinate', async () => bearer(hs256(Buffer.from(marketplaceJwk.x!, 'base64url')))],
      ['RS256 with an attacker key and the real kid', async () => {
        const { privateKey } = await generateKeyPair('RS256');
        return bearer(await new SignJWT(devClaims()).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: marketplaceJwk.kid }).sign(privateKey));
      }],
      ['ES256 with an attacker key and the real kid', async () => bearer(await signWith({ kid: marketplaceJwk.kid }))],
      ['kid not in the key set', async () => bearer(await signWith({ kid: 'attacker-kid' }))],
      ['kid path traversal', async () => bearer(await signWith({ kid: '../../../../dev/null' }))],
      ['kid SQL injection', async () => bearer(await signWith({ kid: "' UNION SELECT 'secret' --" }))],
      ['no kid', async () => bearer(await signWith({}))],
      ['kid as a number', async () => bearer(await signWith({ kid: 1 }))],
      ['empty kid', async () => bearer(await signWith({ kid: '' }))],
      ['jku to an attacker key set', async () => bearer(await issuer.sign('marketplace', devClaims(), { jku: `${issuer.url}/issuers/marketplace/jwks.json` }))],
      ['x5u to an attacker certificate', async () => bearer(await issuer.sign('marketplace', devClaims(), { x5u: `${issuer.url}/cert.pem` }))],
      ['embedded jwk of the attacker', async () => {
        const { privateKey, publicKey } = await attackerKey();
        const jwk = await exportJWK(publicKey);
        return bearer(await new SignJWT(devClaims()).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', jwk }).sign(privateKey));
      }],
      ['embedded x5c chain', async () => bearer(await signWith({ kid: marketplaceJwk.kid, x5c: ['MIIB'] }))],
      ['crit header', async () => bearer(await signWith({ kid: marketplaceJwk.kid, crit: ['b64'], b64: true }))],
      ['payload tampered (sub changed)', async () => {
        const [h, p, s] = (await core.mintToken({ type: 'human', subjectId: 'u_bob' })).split('.');
        const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
        return bearer(`${h}.${b64({ ...claims, sub: 'u_alice' })}.${s}`);
      }],
      ['signature stripped', async () => bearer(`${(await core.mintToken({ type: 'human', subjectId: 'u_alice' })).split('.').slice(0, 2).join('.')}.`)],
      ['bot token relabelled as at+jwt', async () => {
        const [, p, s] = (await core.mintToken({ type: 'bot', subjectId: 'b_ci' })).split('.');
        return bearer(`${b64({ alg: 'ES256', typ: 'at+jwt', kid: marketplaceJwk.kid })}.${p}.${s}`);
      }],
      ['human token of another core instance', async () => bearer(await otherCore.mintToken({ type: 'human', subjectId: 'u_alice' }))],
      ['expired (dev-core, 60 s ago)', async () => bearer(await core.mintToken({ type: 'human', subjectId: 'u_alice', expiresInSeconds: -60 }))],
      ['expired bot token', async () => bearer(await core.mintToken({ type: 'bot', subjectId: 'b_ci', expiresInSeconds: -60 }))],
      ['identity-provider ID token', async () => bearer(await core.mintToken({ type: 'id_token', subjectId: 'u_alice' }))],
      ['marketplace app token', async () => bearer(await core.mintToken({ type: 'app', subjectId: 'u_alice' }))],
      ['core resource token (aud core)', async () => bearer(await core.mintToken({ type: 'core_resource', subjectId: 'u_alice' }))],
      ['JWE (five segments)', async () => {
        const { publicKey } = await generateKeyPair('ECDH-ES', { extractable: true });
        const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(devClaims())))
          .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', typ: 'at+jwt' })
          .encrypt(publicKey);
        return bearer(jwe);
      }],
      ['jku header on an otherwise valid token', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url), { jku: `${issuer.url}/issuers/marketplace/jwks.json` })), 'issuer'],
      ['x5u header on an otherwise valid token', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url), { x5u: `${issuer.url}/x.pem` })), 'issuer'],
      ['jwk header on an otherwise valid token', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url), { jwk: issuer.keys.marketplace.jwk })), 'issuer'],
      ['crit header on an otherwise valid token', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url), { crit: ['b64'], b64: true })), 'issuer'],
      ['16 KB token, validly signed', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { pad: 'x'.repeat(16 * 1024) }))), 'issuer'],
      ['future nbf', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { nbf: now() + 600 }))), 'issuer'],
      ['no exp', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { exp: undefined }))), 'issuer'],
      ['expired beyond the tolerance', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { exp: now() - 30 }))), 'issuer'],
      ['wrong aud (core)', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { aud: 'core' }))), 'issuer'],
      ['wrong aud (list without chat)', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { aud: ['chat-staging', 'core'] }))), 'issuer'],
      ['no aud', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { aud: undefined }))), 'issuer'],
      ['wrong iss (bots issuer on a human token)', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { iss: `${issuer.url}/bots` }))), 'issuer'],
      ['wrong iss (another host)', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { iss: 'https://evil.example/marketplace' }))), 'issuer'],
      ['no iss', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { iss: undefined }))), 'issuer'],
      ['no sub', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { sub: undefined }))), 'issuer'],
      ['empty sub', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { sub: '' }))), 'issuer'],
      ['human token without jti (core could not revoke it)', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { jti: undefined }))), 'issuer'],
      ['human token with an empty jti', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { jti: '' }))), 'issuer'],
      ['human token without client_id', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { client_id: undefined }))), 'issuer'],
      ['human token with a non-string client_id', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { client_id: 7 }))), 'issuer'],
      ['human token of a grant without the chat scope', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { scope: 'core:commits:read' }))), 'issuer'],
      ['human token without a scope', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { scope: undefined }))), 'issuer'],
      ['human token whose scope only starts with chat', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { scope: 'chat:admin chatty' }))), 'issuer'],
      ['human token with the scope as a list', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url, { scope: ['chat'] }))), 'issuer'],
      ['wrong typ (JWT)', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url), { typ: 'JWT' })), 'issuer'],
      ['wrong typ (app+jwt)', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url), { typ: 'app+jwt' })), 'issuer'],
      ['no typ', async () => bearer(await issuer.sign('marketplace', humanClaims(issuer.url), { typ: undefined })), 'issuer'],
      ['bot typ signed by the marketplace key', async () => bearer(await issuer.sign('marketplace', botClaims(issuer.url), { typ: 'bot+jwt' })), 'issuer'],
      ['human typ signed by the bots key', async () => bearer(await issuer.sign('bots', humanClaims(issuer.url), { typ: 'at+jwt' })), 'issuer'],
      ['bot token with the marketplace issuer', async () => bearer(await issuer.sign('bots', botClaims(issuer.url, { iss: `${issuer.url}/marketplace` }))), 'issuer'],
      ['bot token without cid', async () => bearer(await issuer.sign('bots', botClaims(issuer.url, { cid: undefined }))), 'issuer'],
      ['bot token with a non-string cid', async () => bearer(await issuer.sign('bots', botClaims(issuer.url, { cid: 7 }))), 'issuer'],
      ['bot token for another audience', async () => bearer(await issuer.sign('bots', botClaims(issuer.url, { aud: 'core' }))), 'issuer'],
    ];

    const outcomes: string[] = [];
    for (const [name, make, which] of cases) {
      it(name, async () => {
        const header = await make();
        const err = await rejection(which === 'issuer' ? issuerVerifier : devVerifier, header);
        outcomes.push(err.code);
        expect(err.code).to.equal('TOKEN_REJECTED');
        expect(err.status).to.equal(401);
        const token = header.replace(/^\S+ +/, '');
        expect(err.message).to.not.contain(token);
        expect(String(err.cause ?? '')).to.not.contain(token.slice(0, 40));
      });
    }

    it('rejected 100% of the matrix', () => {
      expect(outcomes).to.have.length(cases.length);
      expect(outcomes.every((code) => code === 'TOKEN_REJECTED')).to.equal(true);
    });
  });

  describe('key sets that cannot be fetched', () => {
    async function serverAnswering(handler: Parameters<typeof createServer>[1]) {
      const server = createServer(handler);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    }

    it('answers AUTHORIZATION_UNAVAILABLE when core is unreachable', async () => {
      const { server, url } = await serverAnswering((_req, res) => res.end());
      server.close();
      await once(server, 'close');
      const token = await issuer.sign('marketplace', humanClaims(url));
      const err = await rejection(createTokenVerifier({ coreUrl: url }), bearer(token));
      expect(err.code).to.equal('AUTHORIZATION_UNAVAILABLE');
      expect(err.status).to.equal(503);
    });

    for (const [name, handler] of [
      ['a 500', (_req, res) => res.writeHead(500).end('oops')],
      ['garbage', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": "nope"')],
      ['a redirect', (_req, res) => res.writeHead(302, { location: 'https://evil.example/jwks.json' }).end()],
    ] as [string, Parameters<typeof createServer>[1]][]) {
      it(`answers AUTHORIZATION_UNAVAILABLE when the key set endpoint answers ${name}`, async () => {
        const { server, url } = await serverAnswering(handler);
        try {
          const token = await issuer.sign('bots', botClaims(url));
          expect((await rejection(createTokenVerifier({ coreUrl: url }), bearer(token))).code).to.equal('AUTHORIZATION_UNAVAILABLE');
        } finally {
          server.closeAllConnections();
          server.close();
        }
      });
    }

    it('answers AUTHORIZATION_UNAVAILABLE within the timeout when the key set hangs', async () => {
      const { server, url } = await serverAnswering(() => undefined);
      try {
        const token = await issuer.sign('marketplace', humanClaims(url));
        const started = Date.now();
        const err = await rejection(createTokenVerifier({ coreUrl: url, jwksTimeoutMs: 300 }), bearer(token));
        expect(err.code).to.equal('AUTHORIZATION_UNAVAILABLE');
        expect(Date.now() - started).to.be.below(1500);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });
  });

  it('remembers verified tokens, never refused ones', async () => {
    const verifier = createTokenVerifier({ coreUrl: issuer.url });
    const good = await issuer.sign('marketplace', humanClaims(issuer.url));
    const first = await verifier.verify(bearer(good));
    expect(await verifier.verify(bearer(good))).to.equal(first);
    const [h, p] = good.split('.');
    const forged = `${h}.${p}.${'A'.repeat(86)}`;
    for (let i = 0; i < 2; i++) {
      const err = await verifier.verify(bearer(forged)).then(() => null, (e: unknown) => e);
      expect(err).to.have.property('code', 'TOKEN_REJECTED');
    }
  });

  it('caches key sets: many verifications, one fetch per issuer', async () => {
    const verifier = createTokenVerifier({ coreUrl: issuer.url });
    const before = issuer.jwksRequests();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => issuer.sign('marketplace', humanClaims(issuer.url))));
    await Promise.all(tokens.map((t) => verifier.verify(bearer(t))));
    expect(issuer.jwksRequests() - before).to.equal(1);
  });
});
