import { mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { startTestDevCore } from '../../test/dev-core-harness.ts';
import { ISSUERS, loadOrCreateIssuerKeys, SIGNING_KEYS_FILE } from './signing-keys.ts';

const kidsOf = (keys: Awaited<ReturnType<typeof loadOrCreateIssuerKeys>>) => ISSUERS.map((issuer) => keys[issuer].kid);

describe('signing keys kept in a folder', () => {
  it('are made once, written readable by the owner only, and loaded again', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'dev-core-keys-')), 'keys');
    const made = await loadOrCreateIssuerKeys(dir);
    expect((await stat(join(dir, SIGNING_KEYS_FILE))).mode & 0o777).to.equal(0o600);
    expect((await stat(dir)).mode & 0o777).to.equal(0o700);
    const loaded = await loadOrCreateIssuerKeys(dir);
    expect(kidsOf(loaded)).to.deep.equal(kidsOf(made));
    expect(new Set(kidsOf(made)).size).to.equal(ISSUERS.length);
    expect(loaded.marketplace.publicJwk).to.deep.equal(made.marketplace.publicJwk);
    expect(loaded.marketplace.publicJwk).not.to.have.property('d');
    expect(await readdir(dir)).to.deep.equal([SIGNING_KEYS_FILE]);
  });

  it('dev-cores starting at once on one empty folder all end up with the same keys', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'dev-core-keys-')), 'keys');
    const all = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateIssuerKeys(dir)));
    for (const keys of all) expect(kidsOf(keys)).to.deep.equal(kidsOf(all[0]!));
    expect(await readdir(dir)).to.deep.equal([SIGNING_KEYS_FILE]);
  });

  it('a file without usable keys stops the start, naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dev-core-keys-'));
    await writeFile(join(dir, SIGNING_KEYS_FILE), '{"marketplace": {"kty": "oct"}}');
    let error: Error | undefined;
    await loadOrCreateIssuerKeys(dir).catch((err: Error) => (error = err));
    expect(error?.message).to.contain(join(dir, SIGNING_KEYS_FILE)).and.contain('remove the file');
  });

  it('a token minted before a restart on the same folder and port verifies against the keys served after it', async () => {
    const keysDir = await mkdtemp(join(tmpdir(), 'dev-core-keys-'));
    const first = await startTestDevCore({ keysDir });
    const token = await first.mintToken({ type: 'human', subjectId: 'u_alice' });
    const { port } = first;
    await first.close();

    const second = await startTestDevCore({ keysDir, port });
    try {
      const jwks = (await (await fetch(`${second.url}/issuers/marketplace/jwks.json`)).json()) as { keys: JWK[] };
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: `${second.url}/marketplace`, algorithms: ['ES256'] });
      expect(payload.sub).to.equal('u_alice');
    } finally {
      await second.close();
    }

    // Without the folder every start makes new keys, which refuse the earlier token.
    const fresh = await startTestDevCore({ port });
    try {
      const jwks = (await (await fetch(`${fresh.url}/issuers/marketplace/jwks.json`)).json()) as { keys: JWK[] };
      let refused = false;
      await jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['ES256'] }).catch(() => (refused = true));
      expect(refused).to.equal(true);
    } finally {
      await fresh.close();
    }
  });
});
