import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MessagePageResponse, MessageResponse } from '@chat/contracts';
import { ChildService, RUN_LOG_DIR } from '../harness/child-service.ts';
import { expectStatus } from '../harness/assertions.ts';
import { sharedStack, type Stack } from '../harness/stacks.ts';
import { testConfig } from '../harness/test-config.ts';
import { useItBlocks } from './readme-blocks.ts';

/** The demo repository of dev-core's bundled fixture, which `pnpm start` serves and the README uses. */
const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';

/** Writes a TypeScript snippet where it resolves the workspace's packages (under tests/, gitignored). */
function snippetFile(name: string, code: string): string {
  mkdirSync(RUN_LOG_DIR, { recursive: true });
  const file = join(RUN_LOG_DIR, name);
  writeFileSync(file, code);
  return file;
}

describe('[embedded] README "Use it": every snippet runs against the all-in-one with the demo fixture', function () {
  this.timeout(240_000);
  let stack: Stack;
  let blocks: Array<{ lang: string; code: string }>;
  const mint = (request: Parameters<Stack['core']['mintToken']>[0]) => stack.core.mintToken({ expiresInSeconds: 3600, ...request });
  /** A token in a file, as CHAT_TOKEN_FILE names it. */
  const tokenFile = async (name: string, request: Parameters<Stack['core']['mintToken']>[0]) => snippetFile(name, await mint(request));

  before(async () => {
    stack = await sharedStack('embedded');
    blocks = useItBlocks();
    expect(blocks.map((b) => b.lang)).to.deep.equal(['ts', 'ts', 'sh']);
  });

  it('the SDK in a few lines posts and lists, its token read from CHAT_TOKEN_FILE', async () => {
    const { code } = blocks[0]!;
    expect(code.trim().split('\n').length).to.be.at.most(6);
    const file = snippetFile('readme-sdk.ts', code);
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', file], {
      cwd: testConfig.repoRoot,
      env: { PATH: process.env.PATH ?? '', CHAT_URL: stack.chat.url, CHAT_TOKEN_FILE: await tokenFile('readme-sdk.token', { type: 'human', subjectId: 'u_alice' }) },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^u_alice hello from the SDK$/m);
  });

  it('the bot in ten lines answers a mention of it, and SIGTERM ends it with exit 0', async () => {
    const { code } = blocks[1]!;
    expect(code.trim().split('\n').length).to.be.at.most(10);
    const file = snippetFile('readme-bot.ts', code);
    const bot = new ChildService({ name: 'readme-bot', script: file, env: { CHAT_URL: stack.chat.url, CHAT_TOKEN_FILE: await tokenFile('readme-bot.token', { type: 'bot', subjectId: 'b_ci', credentialId: 'c_1' }) } });
    try {
      const body = `readme bot check ${Date.now()} @b_ci`;
      const start = body.indexOf('@b_ci');
      const alice = await mint({ type: 'human', subjectId: 'u_alice' });
      const posted = await stack.api.append<MessageResponse>(
        { repositoryId: DEMO_REPOSITORY_ID },
        alice,
        { bodyMarkdown: body, mentions: [{ principalKind: 'bot', principalId: 'b_ci', startByte: start, endByte: start + 5 }] },
        { coreAuthorization: `Bearer ${await mint({ type: 'core_resource', subjectId: 'u_alice' })}` },
      );
      expectStatus(posted, 201);
      const expected = `got your ${Buffer.byteLength(body)} bytes, u_alice`;
      const deadline = Date.now() + 120_000;
      let replies: MessageResponse[] = [];
      while (replies.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        const all: MessageResponse[] = [];
        let cursor: string | null = null;
        do {
          const page: { body: MessagePageResponse } = await stack.api.list<MessagePageResponse>({ repositoryId: DEMO_REPOSITORY_ID }, alice, `limit=200${cursor ? `&cursor=${cursor}` : ''}`);
          all.push(...page.body.items);
          cursor = page.body.nextCursor ?? null;
        } while (cursor);
        replies = all.filter((m) => m.senderId === 'b_ci' && m.bodyMarkdown === expected);
      }
      expect(replies, bot.log).to.have.length(1);
      await bot.stop(30_000);
      expect(bot.process.exitCode, bot.log).to.equal(0);
    } finally {
      await bot.stop();
    }
  });

  it('the bot with a token the service refuses, also when read again: exit 1 with what happened and what to do, no stack trace', async () => {
    const file = snippetFile('readme-bot-refused.ts', blocks[1]!.code);
    const expired = await tokenFile('readme-bot-expired.token', { type: 'bot', subjectId: 'b_ci', credentialId: 'c_1', expiresInSeconds: -60 });
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', file], {
      cwd: testConfig.repoRoot,
      env: { PATH: process.env.PATH ?? '', CHAT_URL: stack.chat.url, CHAT_TOKEN_FILE: expired },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, run.stderr).to.equal(1);
    expect(run.stderr).to.contain(
      `bot stopped: TOKEN_REJECTED (401): the service at ${stack.chat.url} refused the token; the token provider was asked for a fresh token and that one was refused too: check what it returns`,
    );
    expect(run.stderr).to.not.match(/^\s+at /m);
  });

  it('the CLI block: every line exits 0 (tail stopped with Ctrl-C prints its resume cursor)', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CHAT_URL: stack.chat.url, CHAT_TOKEN_FILE: await tokenFile('readme-cli.token', { type: 'human', subjectId: 'u_alice' }) };
    const lines = blocks[2]!.code.split('\n').filter((l) => l.trim() !== '');
    const [assignment, ...commands] = lines;
    expect(assignment).to.match(/^R=/);
    expect(commands.join('\n')).to.contain('pnpm chat tail').and.contain('pnpm chat inbox ack');
    for (const line of commands) {
      const script = `set -euo pipefail\n${assignment}\n${line}`;
      if (/ chat tail /.test(line)) {
        // As at a terminal: Ctrl-C goes to the whole process group (pnpm and the chat under it).
        const tail = spawn('bash', ['-c', script.replace(/\npnpm /, '\nexec pnpm ')], { cwd: testConfig.repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        let stdout = '';
        let stderr = '';
        tail.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
        tail.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
        const closed = once(tail, 'close');
        const deadline = Date.now() + 60_000;
        while (!stdout.includes('hello **world**') && Date.now() < deadline && tail.exitCode === null) await new Promise((r) => setTimeout(r, 100));
        process.kill(-tail.pid!, 'SIGINT');
        await closed;
        expect(stdout, stderr).to.contain('hello **world**');
        expect(stderr).to.match(/resume with: chat tail --repository \S+ --after \S+/);
        continue;
      }
      const run = spawnSync('bash', ['-c', script], { cwd: testConfig.repoRoot, env, encoding: 'utf8', timeout: 120_000 });
      expect({ line, status: run.status, stderr: run.status === 0 ? '' : run.stderr }).to.deep.equal({ line, status: 0, stderr: '' });
      if (/--json/.test(line)) expect(() => JSON.parse(run.stdout)).to.not.throw();
      if (/chat post/.test(line)) expect(run.stdout).to.match(/^posted [0-9A-Z]{26}/);
      if (/chat search/.test(line)) expect(run.stdout).to.contain('[hello] **world**');
    }
  });
});
