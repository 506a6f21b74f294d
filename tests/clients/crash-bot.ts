/**
 * The bot the crash test SIGKILLs again and again (`bot-crash.test.ts`), and that the restart test
 * keeps running across restarts of the service (`restart-under-clients.test.ts`): a runBot whose handler
 * replies `re <messageId>` to every mention, pausing a random moment before and after the reply so
 * kills land between reading, replying and acknowledging. One stdout line per handled notification
 * (`handled <notificationId> <repositoryId> <ms from the mention's commit to the handler> <epoch ms> created|replayed`), `stopped`
 * after a clean stop.
 *
 * Environment: CHAT_URL, CHAT_TOKEN or CHAT_TOKEN_FILE (read again whenever the service refuses the
 * token, as the README's bot does), BOT_REPOSITORIES (comma-separated; unset, the bot follows its
 * feed: every repository where it holds a grant, in one stream), BOT_ACK_EVERY,
 * BOT_MAX_PAUSE_MS, and BOT_HANDLER_DELAY_MS (a fixed wait before each reply, after a `handling
 * <notificationId>` line, so a signal can be sent while a handler is in hand).
 */
import { readFile } from 'node:fs/promises';
import { runBot } from '@chat/bot';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const maxPause = Number(process.env.BOT_MAX_PAUSE_MS ?? '5');
const handlerDelay = Number(process.env.BOT_HANDLER_DELAY_MS ?? '0');
const pause = () => new Promise((r) => setTimeout(r, Math.random() * maxPause));
const tokenFile = process.env.CHAT_TOKEN_FILE;

const bot = runBot({
  baseUrl: env('CHAT_URL'),
  token: tokenFile ? () => readFile(tokenFile, 'utf8') : env('CHAT_TOKEN'),
  ...(process.env.BOT_REPOSITORIES ? { repositories: process.env.BOT_REPOSITORIES.split(',') } : {}),
  ackEvery: Number(process.env.BOT_ACK_EVERY ?? '20'),
  ackIntervalMs: 1000,
  async handler({ notification, message, reply }) {
    // From the mention's commit to its handler: what a person waiting for the bot sees.
    const entered = Date.now();
    if (handlerDelay > 0) {
      process.stdout.write(`handling ${notification.notificationId}\n`);
      await new Promise((r) => setTimeout(r, handlerDelay));
    }
    await pause();
    const result = await reply(`re ${message.messageId}`);
    const age = entered - Date.parse(message.createdAt);
    process.stdout.write(`handled ${notification.notificationId} ${notification.repositoryId} ${age} ${entered} ${result.created ? 'created' : 'replayed'}\n`);
    await pause();
  },
});
process.stdout.write('bot started\n');
await bot.done;
process.stdout.write('stopped\n');
