/**
 * `pnpm dev-token <user|bot>` from the repository root, as a person runs it against `pnpm start`: the
 * tokens it prints work as the chat token and the core resource token they are said to be.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ApiClient } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { recordMintedToken } from '../harness/child-service.ts';
import { freePort } from '../harness/free-port.ts';
import { sharedStack, type Stack } from '../harness/stacks.ts';
import { testConfig } from '../harness/test-config.ts';

const ROOM = { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F' };

function devToken(args: string[], coreUrl: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('pnpm', ['--silent', 'dev-token', ...args], {
    cwd: testConfig.repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CHAT_CORE_URL: coreUrl },
    encoding: 'utf8',
    timeout: 120_000,
  });
  for (const token of run.stdout.match(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g) ?? []) recordMintedToken(token);
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The value of `export NAME=...` in the output, and the comment line above it. */
function exported(stdout: string, name: string): { value: string; comment: string } {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`export ${name}=`));
  expect(at, `${name} in:\n${stdout}`).to.be.greaterThan(0);
  return { value: lines[at]!.slice(`export ${name}=`.length), comment: lines[at - 1]! };
}

describe('[embedded] pnpm dev-token mints development tokens from the running dev-core', function () {
  this.timeout(240_000);
  let stack: Stack;

  before(async () => {
    stack = await sharedStack('embedded');
  });

  it('user: a chat token and the core resource token a mention needs, each said to be which', async () => {
    const run = devToken(['user'], stack.chat.coreUrl);
    expect(run.status, run.stderr).to.equal(0);
    // Every line is a comment or an assignment: `eval "$(pnpm --silent dev-token user)"` sets both.
    for (const line of run.stdout.trim().split('\n')) expect(line).to.match(/^(# |export CHAT_(CORE_)?TOKEN=)/);
    const chat = exported(run.stdout, 'CHAT_TOKEN');
    const core = exported(run.stdout, 'CHAT_CORE_TOKEN');
    expect(chat.comment).to.contain('chat token of u_alice').and.contain('--token-file');
    expect(core.comment).to.contain('core resource token of u_alice').and.contain('mention').and.contain('--core-token-file');

    const body = 'dev-token check @u_bob';
    const api = new ApiClient(stack.chat.url);
    const posted = await api.append<MessageResponse>(
      ROOM,
      chat.value,
      { bodyMarkdown: body, mentions: [{ principalKind: 'human', principalId: 'u_bob', startByte: body.indexOf('@'), endByte: body.length }] },
      { coreAuthorization: `Bearer ${core.value}` },
    );
    api.close();
    expectStatus(posted, 201);
  });

  it('bot ID --out DIR: writes the token to a file only the owner reads and prints the flag that takes it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'dev-token-')), 'tokens');
    const run = devToken(['bot', 'b_ci', '--out', dir], stack.chat.coreUrl);
    expect(run.status, run.stderr).to.equal(0);
    const file = join(dir, 'b_ci.token');
    expect(run.stdout.trim().split('\n').at(-1)).to.equal(`--token-file ${file}`);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    const token = readFileSync(file, 'utf8').trim();
    recordMintedToken(token);
    // A fresh connection: the shared client's idle one may have been closed while pnpm ran.
    const listed = await fetch(`${stack.chat.url}/v1/repositories/${ROOM.repositoryId}/room/messages`, { headers: { authorization: `Bearer ${token}` } });
    expect(listed.status).to.equal(200);
  });

  it('names the core URL it tried and CHAT_CORE_URL when nothing answers there; refusals and bad usage are explained', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const down = devToken(['user'], nowhere);
    expect(down.status).to.equal(1);
    expect(down.stderr).to.contain(`no development core answers at ${nowhere} (CHAT_CORE_URL)`);
    expect(down.stdout).to.equal('');

    const unknown = devToken(['user', 'u_nobody'], stack.chat.coreUrl);
    expect(unknown.status).to.equal(1);
    expect(unknown.stderr).to.contain(`the development core at ${stack.chat.coreUrl} refused the token (400: unknown user u_nobody)`);

    const usage = devToken(['robot'], stack.chat.coreUrl);
    expect(usage.status).to.equal(2);
    expect(usage.stderr).to.contain('usage: pnpm dev-token <user|bot>');
  });
});
