import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { demoFixture } from '../test/dev-core-harness.ts';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** Runs the CLI as outside tests do and waits for the URL it prints. */
async function startCli(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', 'src/main.ts'], {
    cwd: packageDir,
    env: { ...process.env, DEV_CORE_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`dev-core exited with ${code}`)));
  });
  return { child, url };
}

describe('dev-core CLI (src/main.ts)', () => {
  it('with DEV_CORE_PORT=0 picks a free port, prints its URL and serves DEV_CORE_FIXTURE', async () => {
    const fixture: any = await demoFixture();
    fixture.users.push({ id: 'u_cli' });
    const dir = await mkdtemp(join(tmpdir(), 'dev-core-'));
    const path = join(dir, 'fixture.json');
    await writeFile(path, JSON.stringify(fixture));
    const { child, url } = await startCli({ DEV_CORE_PORT: '0', DEV_CORE_FIXTURE: path });
    try {
      expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const served = await (await fetch(`${url}/dev/fixture`)).json();
      expect(served).to.deep.equal(fixture);
      const minted = await fetch(`${url}/dev/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'human', subjectId: 'u_cli' }),
      });
      const { token } = (await minted.json()) as { token: string };
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
      expect(claims.iss).to.equal(`${url}/marketplace`);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('refuses to start on an invalid fixture file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dev-core-'));
    const path = join(dir, 'fixture.json');
    await writeFile(path, JSON.stringify({ repositories: [{ id: 'nope', state: 'active' }] }));
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', 'src/main.ts'], {
      cwd: packageDir,
      env: { ...process.env, DEV_CORE_PORT: '0', DEV_CORE_FIXTURE: path },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = await once(child, 'exit');
    expect(code).to.equal(1);
    expect(stderr).to.contain('repositories.0.id');
  });
});
