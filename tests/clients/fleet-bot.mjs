/**
 * The bot of the fleet test (`bot-fleet.test.ts`), in plain JavaScript on the built `@chat/bot`, so
 * its memory is a bot's as a user runs it, without a TypeScript loader's. It follows its feed (every
 * repository where it holds a grant) and replies `re <messageId>` to every mention, pausing a random
 * moment before and after the reply so kills land between reading, replying and acknowledging. One
 * stdout line per handled notification: `handled <notificationId> <repositoryId> <ms from the
 * mention's commit to the handler> <epoch ms> created|replayed`; `stream open` each time its feed
 * stream connects; `stopped` after a clean stop.
 *
 * Environment: CHAT_URL, CHAT_TOKEN, BOT_ACK_EVERY, BOT_MAX_PAUSE_MS.
 */
import { runBot } from '@chat/bot';

const maxPause = Number(process.env.BOT_MAX_PAUSE_MS ?? '5');
const pause = () => new Promise((r) => setTimeout(r, Math.random() * maxPause));

const bot = runBot({
  baseUrl: process.env.CHAT_URL,
  token: process.env.CHAT_TOKEN,
  ackEvery: Number(process.env.BOT_ACK_EVERY ?? '20'),
  ackIntervalMs: 1000,
  stream: { onStatus: (status) => status.state === 'open' && process.stdout.write('stream open\n') },
  async handler({ notification, message, reply }) {
    const entered = Date.now();
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
