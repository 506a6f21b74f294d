/**
 * The production image without a Docker engine: the Dockerfile's own deploy command runs on the
 * built workspace and its output is laid out as the runtime stage's COPY puts it. The image then
 * holds production dependencies and compiled code only, every command of the Dockerfile and of the
 * Kubernetes manifests names a file in it, and every service starts from it with plain `node`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { loadManifestTree } from '@chat/k8s-validate';
import { testConfig } from '../harness/test-config.ts';
import { COMPILED_MIGRATION, COMPILED_SERVICES, sharedDependencies, startCompiled, type SharedDependencies, type StartedService } from './compiled-services.ts';
import { assembleImage, installedPackageNames, type ImageContents } from './image-contents.ts';

/** Development tools that must never reach the image. */
const DEVELOPMENT_ONLY = ['tsx', 'esbuild', 'mocha', 'chai', 'typescript', 'playwright', 'playwright-core', 'turbo', 'fast-check', 'openapi-typescript', '@types/mocha', '@types/chai'];

describe('production image (Dockerfile, laid out without a Docker engine)', function () {
  this.timeout(600_000);
  let image: ImageContents;
  /** Image path → host path of a workspace package's folder, following the deploy's links. */
  const packageFolder = (name: string) => {
    const inImage = image.workspacePackages.get(name);
    expect(inImage, `${name} in the image`).to.be.a('string');
    return realpathSync(image.hostPath(inImage!)!);
  };

  before(async () => {
    image = await assembleImage(testConfig.repoRoot);
  });
  after(async () => {
    await image?.remove();
  });

  it('holds production dependencies only', () => {
    const installed = installedPackageNames(image.entries);
    expect(installed.size, 'packages installed').to.be.greaterThan(20);
    expect(DEVELOPMENT_ONLY.filter((name) => installed.has(name))).to.deep.equal([]);
    const binaries = image.entries.filter((e) => /\/node_modules\/\.bin\/(tsx|mocha|tsc|turbo|esbuild)$/.test(e.path));
    expect(binaries.map((e) => e.path)).to.deep.equal([]);
  });

  it('holds no sources, test code, test fixtures or fault-injection settings of the workspace packages', () => {
    expect([...image.workspacePackages.keys()]).to.include.members(['@chat/all-in-one', '@chat/api', '@chat/stream-gateway', '@chat/notifier', '@chat/store']);
    const offending: string[] = [];
    for (const [name, folder] of image.workspacePackages) {
      const own = image.entries.filter((e) => e.path.startsWith(`${folder}/`) && !e.path.slice(folder.length).includes('/node_modules/'));
      for (const entry of own) {
        const inside = entry.path.slice(folder.length + 1);
        const parts = inside.split('/');
        if (parts.some((p) => ['test', 'tests', '__tests__', 'bench', 'src'].includes(p))) offending.push(`${name}: ${inside} (source, test or bench folder)`);
        else if (/\.test\.|\.spec\./.test(inside)) offending.push(`${name}: ${inside} (test file)`);
        else if (/xss-vectors|fixtures\/.*\.test|\.ts$/.test(inside) && !inside.endsWith('.d.ts')) offending.push(`${name}: ${inside} (TypeScript source or fixture)`);
        else if (!entry.directory && inside.endsWith('.js') && readFileSync(image.hostPath(entry.path)!, 'utf8').includes('CHAT_TEST_')) {
          offending.push(`${name}: ${inside} (reads a CHAT_TEST_ fault-injection setting)`);
        }
      }
    }
    expect(offending).to.deep.equal([]);
    expect(image.entries.filter((e) => /xss-vectors/.test(e.path)).map((e) => e.path)).to.deep.equal([]);
  });

  it("has every service's compiled entry point and the migrations", () => {
    const missing = [...COMPILED_SERVICES, COMPILED_MIGRATION]
      .map((s) => `${s.packageName}/${s.entry}`)
      .filter((path) => {
        const [scope, name, ...rest] = path.split('/');
        return !existsSync(join(packageFolder(`${scope}/${name}`), ...rest));
      });
    expect(missing).to.deep.equal([]);
    expect(existsSync(join(packageFolder('@chat/store'), 'migrations', '0001_rooms_messages.sql'))).to.equal(true);
    expect(existsSync(join(packageFolder('@chat/contracts'), 'openapi.json'))).to.equal(true);
  });

  it("holds the store's PGlite template, which an empty data directory starts from with the image's PGlite", async () => {
    const store = packageFolder('@chat/store');
    expect(existsSync(join(store, 'dist', 'pglite-template.tar.gz'))).to.equal(true);
    const dataDir = await mkdtemp(join(tmpdir(), 'chat-image-template-'));
    try {
      // The image's own store module and PGlite, as the all-in-one's first start uses them (a file:
      // PGlite's worker thread inherits node's options, and --input-type refuses a file).
      const probe = join(dataDir, 'probe.mjs');
      await writeFile(
        probe,
        `const { startPgliteThread } = await import(${JSON.stringify(pathToFileURL(join(store, 'dist', 'pglite-thread.js')).href)});
        const db = await startPgliteThread(process.argv[2], { onTemplateUnusable: (err) => console.log('unusable: ' + err.message) });
        const { rows } = await db.query('SELECT count(*)::int AS n FROM chat_migrations');
        console.log(JSON.stringify({ origin: db.origin, migrations: rows[0].n }));
        await db.close();\n`,
      );
      const child = spawn(process.execPath, [probe, join(dataDir, 'data')], { cwd: store, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code, output).to.equal(0);
      const migrations = readdirSync(join(store, 'migrations')).filter((f) => f.endsWith('.sql')).length;
      expect(output.trim()).to.equal(JSON.stringify({ origin: 'template', migrations }));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("holds the viewer's built page and assets, without the bundler's metadata", () => {
    const viewer = image.workspacePackages.get('@chat/viewer');
    expect(viewer, '@chat/viewer in the image').to.be.a('string');
    const files = image.entries.filter((e) => !e.directory && e.path.startsWith(`${viewer}/dist/`)).map((e) => e.path.slice(viewer!.length + 1));
    expect(files).to.include.members(['dist/index.html', 'dist/main.js', 'dist/server/index.js']);
    const html = readFileSync(image.hostPath(`${viewer}/dist/index.html`)!, 'utf8');
    const referenced = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => `dist/${m[1]}`);
    expect(referenced.filter((p) => p.endsWith('.js')), 'index.html loads one script').to.have.length(1);
    expect(referenced.filter((p) => p.endsWith('.css')), 'index.html loads one stylesheet').to.have.length(1);
    expect(files).to.include.members(referenced);
    expect(files.filter((p) => p.endsWith('meta.json'))).to.deep.equal([]);
  });

  it("the Dockerfile's CMD and every Kubernetes workload's command run a file of the image", async () => {
    const { plan } = image;
    const commands = [{ what: 'Dockerfile CMD', workingDir: plan.workdir, command: plan.cmd }];
    const tree = await loadManifestTree(join(testConfig.repoRoot, 'infra/k8s'));
    for (const doc of tree.documents) {
      const object = doc.value as { kind?: string; metadata?: { name?: string }; spec?: { template?: { spec?: { containers?: Array<{ name: string; workingDir?: string; command?: string[]; args?: string[] }> } } } };
      if (object.kind !== 'Deployment' && object.kind !== 'Job') continue;
      for (const c of object.spec?.template?.spec?.containers ?? []) {
        commands.push({ what: `${doc.file} ${object.kind}/${object.metadata?.name} ${c.name}`, workingDir: c.workingDir ?? plan.workdir, command: [...(c.command ?? []), ...(c.args ?? [])] });
      }
    }
    expect(commands.length, 'the Dockerfile and 5 workloads').to.be.at.least(6);
    for (const { what, workingDir, command } of commands) {
      expect(command[0], `${what}: runs plain node`).to.equal('node');
      expect(command.slice(1).filter((a) => a.startsWith('-')), `${what}: no node flags (no loader)`).to.deep.equal([]);
      const host = image.hostPath(posix.join(workingDir, command[1]!));
      expect(host !== undefined && existsSync(host), `${what}: ${workingDir}/${command[1]} is in the image`).to.equal(true);
    }
  });

  describe('started from the image with plain node', () => {
    let shared: SharedDependencies;
    const started: StartedService[] = [];
    const startedByName = new Map<string, StartedService>();
    before(async () => {
      shared = await sharedDependencies('image');
    });
    after(async () => {
      await Promise.all(started.map((s) => s.service.stop()));
      await shared?.release();
    });

    it('the migration CLI migrates a fresh database and exits 0', async () => {
      const child = spawn(process.execPath, [COMPILED_MIGRATION.entry], {
        cwd: packageFolder(COMPILED_MIGRATION.packageName),
        env: { PATH: process.env.PATH, DATABASE_URL: shared.database.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code, output).to.equal(0);
    });

    it('every service answers its readiness probe', async () => {
      const devCoreSpec = COMPILED_SERVICES.find((s) => s.name === 'dev-core')!;
      const devCore = await startCompiled(devCoreSpec, packageFolder(devCoreSpec.packageName), {});
      started.push(devCore);
      const env = { ...shared.env, CORE_URL: devCore.url };
      const times: Record<string, number> = { 'dev-core': Math.round(devCore.readyMs) };
      for (const spec of COMPILED_SERVICES.filter((s) => s !== devCoreSpec)) {
        const service = await startCompiled(spec, packageFolder(spec.packageName), env);
        started.push(service);
        startedByName.set(spec.name, service);
        times[spec.name] = Math.round(service.readyMs);
      }
      console.log(`      ready after (ms, spawn to first successful probe): ${JSON.stringify(times)}`);
      expect(Object.keys(times)).to.have.members(COMPILED_SERVICES.map((s) => s.name));
      // Its DATA_DIR was empty: the database came from the store's PGlite template, not initdb.
      expect(startedByName.get('all-in-one')!.service.log).not.to.match(/PGlite template/);
    });

    it("the all-in-one and the viewer's own server answer / with the viewer's page and its assets", async () => {
      for (const name of ['all-in-one', 'viewer']) {
        const url = startedByName.get(name)?.url;
        expect(url, `${name} started`).to.be.a('string');
        const page = await fetch(`${url}/`);
        expect(page.status, `${name} /`).to.equal(200);
        expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
        expect(page.headers.get('content-security-policy')).to.include("script-src 'self'");
        const html = await page.text();
        const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
        expect(assets, `${name}: assets the page loads`).to.have.length(2);
        for (const asset of assets) expect((await fetch(`${url}${asset}`)).status, `${name} ${asset}`).to.equal(200);
        const config = (await (await fetch(`${url}/viewer-config.json`)).json()) as { redirectUri: string };
        expect(config.redirectUri, `${name}: the callback is on its own origin`).to.match(/^http:\/\/[^/]+\/callback$/);
      }
    });
  });
});
