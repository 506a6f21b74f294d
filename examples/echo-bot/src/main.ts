/**
 * `pnpm example:echo-bot`: a bot that answers every mention of it with an echo of the message.
 *
 * With `pnpm start` running in another terminal, nothing needs setting: the bot takes a token for
 * the demo bot `b_ci` from the embedded development core and follows the demo repository. Against
 * any other service set CHAT_URL, CHAT_TOKEN (a bot token) and CHAT_REPOSITORIES (comma-separated).
 * Ctrl-C stops it cleanly: the reply in hand is finished and the inbox acknowledged.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBot } from '@chat/bot';
import { mintDemoToken } from './demo-token.ts';
import { echoHandler } from './echo-handler.ts';

const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';
const baseUrl = process.env.CHAT_URL ?? 'http://127.0.0.1:8080';
const coreUrl = process.env.CHAT_CORE_URL ?? 'http://127.0.0.1:8081';
const repositories = (process.env.CHAT_REPOSITORIES ?? DEMO_REPOSITORY_ID).split(',');

async function demoInstructions(): Promise<string> {
  // A person's tokens for trying it, in files only the owner reads (never printed).
  const dir = mkdtempSync(join(tmpdir(), 'echo-bot-'));
  const human = join(dir, 'alice.token');
  const core = join(dir, 'alice-core.token');
  writeFileSync(human, await mintDemoToken(coreUrl, { type: 'human', subjectId: 'u_alice' }), { mode: 0o600 });
  writeFileSync(core, await mintDemoToken(coreUrl, { type: 'core_resource', subjectId: 'u_alice' }), { mode: 0o600 });
  const flags = `--url ${baseUrl} --repository ${repositories[0]} --token-file ${human}`;
  return [
    'try it from another terminal:',
    `  pnpm chat post ${flags} --core-token-file ${core} --mention bot:b_ci 'hello @b_ci'`,
    `  pnpm chat messages ${flags}`,
  ].join('\n');
}

let token = process.env.CHAT_TOKEN;
let instructions = '';
try {
  if (!token) {
    token = await mintDemoToken(coreUrl, { type: 'bot', subjectId: 'b_ci', credentialId: 'c_1' });
    instructions = await demoInstructions();
  }
} catch (err) {
  process.stderr.write(`echo-bot: ${(err as Error).message}\n`);
  process.exit(1);
}

const bot = runBot({ baseUrl, token, repositories, handler: echoHandler });
process.stdout.write(`echo-bot: answering mentions in ${repositories.join(', ')} on ${baseUrl} (Ctrl-C stops)\n${instructions}\n`);
try {
  await bot.done;
  process.stdout.write('echo-bot: stopped\n');
} catch (err) {
  process.stderr.write(`echo-bot: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
