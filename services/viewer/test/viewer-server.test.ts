import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ConfigError } from '@chat/service-config';
import { contentSecurityPolicy, createViewerListener, loadViewerServerConfig, VIEWER_DIST_DIR } from '../src/server/index.ts';
import { createHttpDurationHistogram, createLogger } from '@chat/observability';
import { Registry } from 'prom-client';

const ENV = { VIEWER_PUBLIC_URL: 'https://chat.example.com/', VIEWER_CORE_URL: 'https://forge.example.com' };

describe("viewer's static server", () => {
  describe('configuration', () => {
    it('derives the page config from the environment: same origin for chat, callback under the public URL', () => {
      const config = loadViewerServerConfig({ ...ENV, VIEWER_ROOMS: '[{"repositoryId":"01JGFJJZ00QNYBVPQTAT49MN0F","label":"demo"}]' });
      expect(config.viewer).to.deep.equal({
        chatUrl: '',
        coreUrl: 'https://forge.example.com',
        clientId: 'chat-viewer',
        redirectUri: 'https://chat.example.com/callback',
        commitUrlTemplate: 'https://forge.example.com/repositories/{repositoryId}/commits/{sha}',
        rooms: [{ repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F', label: 'demo' }],
      });
      expect(config.admin.port).to.equal(9094);
    });

    it('names every bad variable: missing URLs, plain http off loopback, rooms that are not a JSON list of rooms', () => {
      const bad = (env: NodeJS.ProcessEnv) => {
        try {
          loadViewerServerConfig(env);
        } catch (err) {
          expect(err).to.be.instanceOf(ConfigError);
          return (err as Error).message;
        }
        throw new Error('accepted');
      };
      expect(bad({})).to.match(/VIEWER_PUBLIC_URL/).and.match(/VIEWER_CORE_URL/);
      expect(bad({ ...ENV, VIEWER_CORE_URL: 'http://forge.example.com' })).to.match(/VIEWER_CORE_URL: must be https/);
      expect(bad({ ...ENV, VIEWER_PUBLIC_URL: 'http://chat.example.com' })).to.match(/VIEWER_PUBLIC_URL/);
      expect(bad({ ...ENV, VIEWER_ROOMS: '[{' })).to.match(/VIEWER_ROOMS: not JSON/);
      expect(bad({ ...ENV, VIEWER_ROOMS: '[{"label":"no id"}]' })).to.match(/VIEWER_ROOMS/);
      expect(loadViewerServerConfig({ VIEWER_PUBLIC_URL: 'http://127.0.0.1:8080', VIEWER_CORE_URL: 'http://localhost:8081' }).viewer.redirectUri).to.equal('http://127.0.0.1:8080/callback');
    });
  });

  describe('serving a bundle', () => {
    let dir: string;
    let server: Server;
    let base: string;
    const config = loadViewerServerConfig(ENV).viewer;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'viewer-server-'));
      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/app-X.js"></script>');
      writeFileSync(join(dir, 'assets', 'app-X.js'), 'console.log(1);');
      writeFileSync(join(dir, 'meta.json'), '{}');
      server = createServer(createViewerListener(config, { logger: createLogger({ name: 'viewer-test', level: 'silent' }), httpDuration: createHttpDurationHistogram(new Registry()) }, dir)).listen(0, '127.0.0.1');
      await once(server, 'listening');
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => {
      server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('serves the page at / and /callback, uncached, with the CSP that allows only this origin and core', async () => {
      for (const path of ['/', '/callback', '/callback?code=abc&state=xyz']) {
        const res = await fetch(`${base}${path}`);
        expect(res.status, path).to.equal(200);
        expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(res.headers.get('x-frame-options')).to.equal('DENY');
        expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
        expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
        const csp = res.headers.get('content-security-policy');
        expect(csp).to.equal(contentSecurityPolicy(config));
        expect(csp).to.include("connect-src 'self' https://forge.example.com").and.include("script-src 'self'").and.include("frame-ancestors 'none'");
        expect(await res.text()).to.include('/assets/app-X.js');
      }
    });

    it('serves the page config and hashed assets (immutable)', async () => {
      const configRes = await fetch(`${base}/viewer-config.json`);
      expect(configRes.status).to.equal(200);
      expect(configRes.headers.get('cache-control')).to.equal('no-cache');
      expect(await configRes.json()).to.deep.equal(config);
      const asset = await fetch(`${base}/assets/app-X.js`);
      expect(asset.status).to.equal(200);
      expect(asset.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
      expect(asset.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      const again = await fetch(`${base}/assets/app-X.js`, { headers: { 'If-None-Match': asset.headers.get('etag')! } });
      expect(again.status).to.equal(304);
    });

    it('answers 404 for anything else: unknown assets, the build metadata, API paths', async () => {
      for (const [method, path] of [['GET', '/assets/app-Y.js'], ['GET', '/meta.json'], ['GET', '/assets/../meta.json'], ['GET', '/v1/openapi.json'], ['GET', '/index.html/x']] as const) {
        const res = await fetch(`${base}${path}`, { method });
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.headers.get('cache-control'), path).to.equal('no-store');
        expect(res.headers.get('x-request-id'), path).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(await res.text()).to.equal('not found\n');
      }
    });

    it('answers another method on a page 405 with Allow: GET', async () => {
      for (const [method, path] of [['POST', '/'], ['DELETE', '/callback'], ['PUT', '/assets/app-X.js']] as const) {
        const res = await fetch(`${base}${path}`, { method });
        expect(res.status, `${method} ${path}`).to.equal(405);
        expect(res.headers.get('allow'), path).to.equal('GET');
        expect(res.headers.get('x-request-id'), path).to.match(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        await res.arrayBuffer();
      }
    });
  });

  describe('the process (src/main.ts)', () => {
    let child: ChildProcess | undefined;
    after(() => {
      child?.kill('SIGTERM');
    });

    it('serves the built page and reports ready on its admin port, and stops on SIGTERM', async function () {
      this.timeout(60_000);
      const packageDir = fileURLToPath(new URL('..', import.meta.url));
      const getPorts = async () => {
        const s = createServer().listen(0, '127.0.0.1');
        await once(s, 'listening');
        const port = (s.address() as AddressInfo).port;
        s.close();
        return port;
      };
      const [port, admin] = [await getPorts(), await getPorts()];
      child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', 'src/main.ts'], {
        cwd: packageDir,
        env: { PATH: process.env.PATH, ...ENV, HOST: '127.0.0.1', PORT: String(port), ADMIN_HOST: '127.0.0.1', VIEWER_ADMIN_PORT: String(admin), LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      const deadline = Date.now() + 50_000;
      let ready: Response | undefined;
      while (Date.now() < deadline) {
        ready = await fetch(`http://127.0.0.1:${admin}/readyz`).catch(() => undefined);
        if (ready) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const built = (await import('node:fs')).existsSync(join(VIEWER_DIST_DIR, 'index.html'));
      expect(ready?.status, 'readyz').to.equal(built ? 200 : 503);
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.status).to.equal(built ? 200 : 503);
      if (built) expect(page.headers.get('content-security-policy')).to.include('connect-src \'self\' https://forge.example.com');
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code).to.equal(0);
      child = undefined;
    });
  });
});
