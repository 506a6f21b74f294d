/**
 * `pnpm example:echo-bot`: a bot that answers every mention of it with an echo of the message.
 * `pnpm example:echo-bot --help` lists its settings (see `settings.ts`).
 */
import { readFile } from 'node:fs/promises';
import { ChatTokenRejectedError, runBot } from '@chat/bot';
import type { TokenProvider } from '@chat/client';
import { echoHandler } from './echo-handler.ts';
import { demoInstructions } from './demo-files.ts';
import { mintDemoToken } from './demo-token.ts';
import { HELP, readSettings, type TokenSource } from './settings.ts';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const settings = readSettings(process.env);
const say = (text: string) => process.stdout.write(`echo-bot: ${text}\n`);

/**
 * The bot's token provider, asked before each request and with `forceRefresh` after the service
 * refused the token (it expired, or the service restarted with other keys): a file is read again, a
 * minted token is minted anew.
 */
function tokenProvider(source: TokenSource): TokenProvider {
  if (source.kind === 'fixed') return source.token;
  if (source.kind === 'file') return () => readFile(source.path, 'utf8');
  let minted: Promise<string> | undefined;
  return ({ forceRefresh }) => {
    if (!minted || forceRefresh) minted = mintDemoToken(source.coreUrl, { type: 'bot', subjectId: 'b_ci', credentialId: 'c_1' });
    return minted;
  };
}

if (settings.defaultUrl) say(`CHAT_URL is not set: using the local service at ${settings.baseUrl}`);
const source = settings.token;
const token = tokenProvider(source);
say(
  source.kind === 'mint'
    ? `minting tokens for the demo bot b_ci from the development core at CHAT_CORE_URL=${source.coreUrl}`
    : source.kind === 'file'
      ? `the bot's token comes from CHAT_TOKEN_FILE=${source.path}`
      : "the bot's token comes from CHAT_TOKEN; it cannot be renewed (CHAT_TOKEN_FILE can)",
);

let instructions = '';
try {
  if (source.kind === 'mint') {
    // Minted now, so an unreachable core is said at start rather than at the first request.
    if (typeof token === 'function') await token({ forceRefresh: false });
    instructions = await demoInstructions(source.coreUrl, settings.baseUrl, settings.repositories[0]!);
  }
} catch (err) {
  process.stderr.write(`echo-bot: ${(err as Error).message}\n`);
  process.exit(1);
}

let bot;
try {
  bot = runBot({ baseUrl: settings.baseUrl, token, allowInsecureHttp: settings.allowInsecureHttp, repositories: settings.repositories, handler: echoHandler });
} catch (err) {
  process.stderr.write(`echo-bot: ${(err as Error).message}\n`);
  process.exit(1);
}
say(`answering mentions in ${settings.repositories.join(', ')} on ${settings.baseUrl} (Ctrl-C stops)${instructions ? `\n${instructions}` : ''}`);
try {
  await bot.done;
  say('stopped');
} catch (err) {
  const hint =
    err instanceof ChatTokenRejectedError && source.kind === 'mint'
      ? ` (the token came from CHAT_CORE_URL=${source.coreUrl}: is that the core the service at ${settings.baseUrl} uses?)`
      : '';
  process.stderr.write(`echo-bot: ${(err as Error).message}${hint}\n`);
  process.exitCode = 1;
}
