import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ChildService } from '../harness/child-service.ts';
import { sharedStack } from '../harness/stacks.ts';
import { runChat } from './cli-process.ts';

/** The demo repository of dev-core's bundled fixture, which `pnpm start` serves. */
const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';

describe('[embedded] examples/echo-bot against the all-in-one with its demo fixture', function () {
  this.timeout(180_000);

  it('starts with no settings but the URLs, answers a mention made with the command it prints, and stops with exit 0 on SIGTERM', async () => {
    const stack = await sharedStack('embedded');
    const bot = new ChildService({ name: 'echo-bot', script: 'examples/echo-bot/src/main.ts', env: { CHAT_URL: stack.chat.url, CHAT_CORE_URL: stack.core.url } });
    try {
      const printed = await bot.waitForOutput(/^ {2}pnpm chat post (.+)$/m, 60_000);
      // The printed command, as a newcomer would paste it (pnpm chat = the built CLI).
      const args = printed[1]!.match(/'[^']*'|\S+/g)!.map((a) => a.replace(/^'(.*)'$/, '$1'));
      expect(args).to.include('--token-file').and.include('--core-token-file');
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
    } finally {
      await bot.stop();
    }
  });
});
