import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createRoutePipeline } from '@chat/http-kit';
import { createHttpDurationHistogram, createLogger } from '@chat/observability';
import { Registry } from 'prom-client';
import { createViewerRoutes, type ViewerConfig } from '../src/server/index.ts';

const CONFIG: ViewerConfig = {
  chatUrl: '',
  coreUrl: 'http://127.0.0.1:8081',
  clientId: 'chat-viewer',
  redirectUri: 'http://127.0.0.1:8080/callback',
  commitUrlTemplate: 'http://127.0.0.1:8081/repositories/{repositoryId}/commits/{sha}',
  rooms: [],
};

const SERVICES = { logger: createLogger({ name: 'viewer-test', level: 'silent' }), httpDuration: createHttpDurationHistogram(new Registry()) };

describe('viewer routes', () => {
  let dir: string;
  let server: Server;
  let base: string;

  async function serve(bundleDir: string): Promise<void> {
    server = createServer(createRoutePipeline([createViewerRoutes(() => CONFIG, SERVICES, bundleDir)], { notFound: (_req, res) => res.writeHead(404).end('fallback') }).listener);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'viewer-bundle-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/app-X.js"></script>');
    writeFileSync(join(dir, 'assets', 'app-X.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  });
  afterEach(async () => {
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page at / and /callback uncached with a CSP that allows only its own scripts and calls chat and core', async () => {
    await serve(dir);
    for (const path of ['/', '/callback?code=a&state=b']) {
      const response = await fetch(base + path);
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).to.equal('no-store');
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).to.contain("script-src 'self'").and.contain("connect-src 'self' http://127.0.0.1:8081").and.not.contain('unsafe');
    }
  });

  it('serves hashed assets immutable, gzipped on request, with a validator', async () => {
    await serve(dir);
    const response = await fetch(`${base}/assets/app-X.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(response.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(response.headers.get('content-encoding')).to.equal('gzip');
    const etag = response.headers.get('etag')!;
    expect((await fetch(`${base}/assets/app-X.js`, { headers: { 'if-none-match': etag } })).status).to.equal(304);
    expect((await fetch(`${base}/assets/other.js`)).status).to.equal(404);
    expect((await fetch(`${base}/v1/anything`)).status, 'other paths fall through').to.equal(404);
    expect(await (await fetch(`${base}/v1/anything`)).text()).to.equal('fallback');
  });

  it('serves its settings, and says how to build when there is no bundle', async () => {
    await serve(dir);
    expect(await (await fetch(`${base}/viewer-config.json`)).json()).to.deep.equal(CONFIG);
    server.close();
    await serve(join(dir, 'missing'));
    const response = await fetch(`${base}/`);
    expect(response.status).to.equal(503);
    expect(await response.text()).to.contain('pnpm build');
  });

  it('answers HEAD like GET for the page, its settings and its assets, without a body', async () => {
    await serve(dir);
    for (const [path, headers] of [
      ['/', {}],
      ['/callback?code=a&state=b', {}],
      ['/viewer-config.json', {}],
      ['/assets/app-X.js', { 'accept-encoding': 'gzip' }],
      ['/assets/missing.js', {}],
    ] as const) {
      const get = await fetch(base + path, { headers });
      const head = await fetch(base + path, { method: 'HEAD', headers });
      expect(head.status, path).to.equal(get.status);
      for (const name of ['content-type', 'content-length', 'content-encoding', 'cache-control', 'etag', 'content-security-policy', 'x-content-type-options']) {
        expect(head.headers.get(name), `${path} ${name}`).to.equal(get.headers.get(name));
      }
      expect(await head.text(), path).to.equal('');
    }
    server.close();
    await serve(join(dir, 'missing'));
    expect((await fetch(`${base}/`, { method: 'HEAD' })).status, 'not built').to.equal(503);
  });

  it('gives every answer an X-Request-Id, GET and HEAD: the client\'s when well formed, else a new one', async () => {
    await serve(dir);
    const seen = new Set<string>();
    for (const path of ['/', '/viewer-config.json', '/assets/app-X.js', '/assets/missing.js']) {
      for (const method of ['GET', 'HEAD']) {
        const id = (await fetch(base + path, { method })).headers.get('x-request-id');
        expect(id, `${method} ${path}`).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        seen.add(id!);
      }
    }
    expect(seen.size, 'one per request').to.equal(8);
    expect((await fetch(`${base}/`, { headers: { 'x-request-id': 'edge-42.a:b' } })).headers.get('x-request-id')).to.equal('edge-42.a:b');
    expect((await fetch(`${base}/`, { method: 'HEAD', headers: { 'x-request-id': 'not ok' } })).headers.get('x-request-id')).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });
});
