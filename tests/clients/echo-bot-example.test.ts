import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MessageResponse } from '@chat/contracts';
import { ChildService } from '../harness/child-service.ts';
import { sharedStack } from '../harness/stacks.ts';
import { runChat } from './cli-process.ts';
import { freePort } from '../harness/free-port.ts';
import { testConfig } from '../harness/test-config.ts';

/** The demo repository of dev-core's bundled fixture, which `pnpm start` serves. */
const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';

describe('[embedded] examples/echo-bot against the all-in-one with its demo fixture', function () {
  this.timeout(180_000);

  it('starts with no settings but the URLs, answers a mention made with the command it prints, and stops with exit 0 on SIGTERM, leaving no temporary folder', async () => {
    const stack = await sharedStack('embedded');
    const bot = new ChildService({ name: 'echo-bot', script: 'examples/echo-bot/src/main.ts', env: { CHAT_URL: stack.chat.url, CHAT_CORE_URL: stack.core.url } });
    try {
      const printed = await bot.waitForOutput(/^ {2}pnpm chat post (.+)$/m, 60_000);
      expect(bot.log).to.contain(`from the development core at CHAT_CORE_URL=${stack.core.url}`).and.not.contain('CHAT_URL is not set');
      // The printed command, as a newcomer would paste it (pnpm chat = the built CLI).
      const args = printed[1]!.match(/'[^']*'|\S+/g)!.map((a) => a.replace(/^'(.*)'$/, '$1'));
      expect(args).to.include('--token-file').and.include('--core-token-file');
      const folder = dirname(args[args.indexOf('--token-file') + 1]!);
      expect(existsSync(folder)).to.equal(true);
      const text = `echo test ${Date.now()}`;
      const body = args.pop()!;
      const posted = await runChat(['post', ...args, '--json', `${body} ${text}`], {});
      expect(posted.code, posted.stderr).to.equal(0);
      const mention = JSON.parse(posted.stdout) as MessageResponse;
      expect(mention.repositoryId).to.equal(DEMO_REPOSITORY_ID);

      const flags = args.slice(0, args.indexOf('--core-token-file'));
      let reply: MessageResponse | undefined;
      const deadline = Date.now() + 60_000;
      while (!reply && Date.now() < deadline) {
        const listed = await runChat(['messages', ...flags, '--all', '--json'], {});
        const messages = listed.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as MessageResponse);
        reply = messages.find((m) => m.senderId === 'b_ci' && m.bodyMarkdown.includes(text));
        if (!reply) await new Promise((r) => setTimeout(r, 500));
      }
      expect(reply, bot.log).to.not.equal(undefined);
      expect(reply!.bodyMarkdown).to.equal(`echo for u_alice:\n\n> hello  ${text}`);
      await bot.stop(30_000);
      expect(bot.process.exitCode, bot.log).to.equal(0);
      expect(bot.log).to.contain('echo-bot: stopped');
      expect(existsSync(folder), `${folder} is left behind`).to.equal(false);
    } finally {
      await bot.stop();
    }
  });

  it('Ctrl-C (SIGINT) stops it with exit 0 and removes its token folder too', async () => {
    const stack = await sharedStack('embedded');
    const bot = new ChildService({ name: 'echo-bot-sigint', script: 'examples/echo-bot/src/main.ts', env: { CHAT_URL: stack.chat.url, CHAT_CORE_URL: stack.core.url } });
    try {
      const printed = await bot.waitForOutput(/--token-file (\S+)/, 60_000);
      const folder = dirname(printed[1]!);
      expect(existsSync(folder)).to.equal(true);
      bot.process.kill('SIGINT');
      await bot.stop(30_000);
      expect(bot.process.exitCode, bot.log).to.equal(0);
      expect(existsSync(folder), `${folder} is left behind`).to.equal(false);
    } finally {
      await bot.stop();
    }
  });

  it('--help names every variable it reads, CHAT_CORE_URL included', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/echo-bot/src/main.ts', '--help'], { cwd: testConfig.repoRoot, encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    for (const name of ['CHAT_URL', 'CHAT_CORE_URL', 'CHAT_TOKEN_FILE', 'CHAT_TOKEN', 'CHAT_REPOSITORIES', 'CHAT_ALLOW_INSECURE_HTTP']) expect(run.stdout).to.contain(name);
  });

  it('without CHAT_URL it says it uses the local service; a core that does not answer, or is no development core, is named and the bot exits 1', async () => {
    const stack = await sharedStack('embedded');
    const nothing = `http://127.0.0.1:${await freePort()}`;
    const unreachable = new ChildService({ name: 'echo-bot-no-core', script: 'examples/echo-bot/src/main.ts', env: { CHAT_URL: '', CHAT_CORE_URL: nothing } });
    await unreachable.waitUntil(async () => false, 30_000).catch(() => undefined);
    expect(unreachable.process.exitCode, unreachable.log).to.equal(1);
    expect(unreachable.log).to.contain('CHAT_URL is not set: using the local service at http://127.0.0.1:8080').and.contain(`no development core answers at CHAT_CORE_URL=${nothing}`);
    // The chat service is no development core: it answers POST /dev/tokens with an error envelope.
    const wrong = new ChildService({ name: 'echo-bot-wrong-core', script: 'examples/echo-bot/src/main.ts', env: { CHAT_URL: stack.chat.url, CHAT_CORE_URL: stack.chat.url } });
    await wrong.waitUntil(async () => false, 30_000).catch(() => undefined);
    expect(wrong.process.exitCode, wrong.log).to.equal(1);
    expect(wrong.log).to.contain(`CHAT_CORE_URL=${stack.chat.url} did not mint a demo token`);
  });
});
