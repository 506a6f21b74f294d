import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedStack } from '../harness/stacks.ts';
import { testConfig } from '../harness/test-config.ts';
import { useItBlocks } from './readme-blocks.ts';

/** The packages an outside project installs, by folder under clients/. */
const PUBLISHED = { client: '@chat/client', bot: '@chat/bot', cli: '@chat/cli' } as const;
const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 240_000 });

/**
 * What an outside project gets: the clients packed with `pnpm pack` (from their built dist, as a
 * publish would), installed with npm into a project in the system's temporary folder, outside the
 * workspace, so nothing resolves to a workspace package. The README's SDK and bot snippets are
 * type-checked there with the workspace's TypeScript against the installed declarations, and the
 * SDK snippet and the installed `chat` run against an all-in-one.
 */
describe('[embedded] the clients as an outside project installs them', function () {
  this.timeout(300_000);
  let scratch: string;

  before(function () {
    scratch = mkdtempSync(join(tmpdir(), 'chat-clients-install-'));
    for (const folder of Object.keys(PUBLISHED)) {
      const packed = run('pnpm', ['pack', '--pack-destination', scratch], join(testConfig.repoRoot, 'clients', folder));
      expect(packed.status, packed.stderr).to.equal(0);
    }
  });

  after(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const tarballs = () => readdirSync(scratch).filter((f) => f.endsWith('.tgz'));

  it('each tarball is publishable: not private, MIT with its LICENSE, exports and files, no source maps, no workspace: ranges', () => {
    expect(tarballs().sort()).to.deep.equal(['chat-bot-0.1.0.tgz', 'chat-cli-0.1.0.tgz', 'chat-client-0.1.0.tgz']);
    for (const tarball of tarballs()) {
      const listing = execFileSync('tar', ['-tzf', join(scratch, tarball)], { encoding: 'utf8' }).split('\n').filter(Boolean);
      expect(listing, tarball).to.include('package/LICENSE');
      expect(listing.filter((f) => f.endsWith('.map')), tarball).to.deep.equal([]);
      expect(listing.filter((f) => f.startsWith('package/src/') || f.endsWith('.test.js')), tarball).to.deep.equal([]);
      const manifest = JSON.parse(execFileSync('tar', ['-xzOf', join(scratch, tarball), 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
      expect(manifest.private, tarball).to.equal(undefined);
      expect(manifest.license, tarball).to.equal('MIT');
      expect(manifest.exports, tarball).to.be.an('object');
      expect(manifest.files, tarball).to.be.an('array');
      expect(JSON.stringify(manifest.dependencies ?? {}), tarball).to.not.contain('workspace:');
      expect(readFileSync(join(testConfig.repoRoot, 'clients', tarball.replace(/^chat-(\w+)-.*$/, '$1'), 'LICENSE'), 'utf8')).to.match(/^MIT License/);
    }
  });

  it('installs with npm outside the workspace; the README snippets type-check against the installed packages, and the SDK snippet and `chat` run', async () => {
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'outside-project', private: true, type: 'module' }));
    const installed = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs().map((t) => `./${t}`)], scratch);
    expect(installed.status, installed.stderr).to.equal(0);

    const [sdk, bot] = useItBlocks().filter((b) => b.lang === 'ts');
    writeFileSync(join(scratch, 'sdk.ts'), sdk!.code);
    writeFileSync(join(scratch, 'bot.ts'), bot!.code);
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          outDir: 'out',
          // Node's types from the workspace: the snippets use process and Buffer, and the scratch
          // project installs nothing but the three tarballs.
          typeRoots: [join(testConfig.repoRoot, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['sdk.ts', 'bot.ts'],
      }),
    );
    const tsc = run(process.execPath, [join(testConfig.repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], scratch);
    expect(tsc.status, tsc.stdout + tsc.stderr).to.equal(0);

    const stack = await sharedStack('embedded');
    const tokenFile = join(scratch, 'alice.token');
    writeFileSync(tokenFile, await stack.core.mintToken({ type: 'human', subjectId: 'u_alice', expiresInSeconds: 3600 }), { mode: 0o600 });
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CHAT_URL: stack.chat.url, CHAT_TOKEN_FILE: tokenFile };
    const snippet = run(process.execPath, ['out/sdk.js'], scratch, env);
    expect(snippet.status, snippet.stderr).to.equal(0);
    expect(snippet.stdout).to.match(/^u_alice hello from the SDK$/m);

    const chat = run(process.execPath, [join(scratch, 'node_modules', '.bin', 'chat'), 'room', '--repository', DEMO_REPOSITORY_ID], scratch, env);
    expect(chat.status, chat.stderr).to.equal(0);
    expect(chat.stdout).to.contain(DEMO_REPOSITORY_ID);
  });
});
