import { Command } from 'commander';
import { createContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { formatMessage } from '../output/formatters.ts';
import { UsageError } from '../usage-error.ts';
import { addConnectionOptions, positiveInteger } from './connection-options.ts';
import { scopeFlags } from './follow-stream.ts';

interface MessagesOptions extends ConnectionOptions {
  limit?: number;
  all?: boolean;
  after?: string;
}

/** Messages printed when neither `--limit` nor `--all` is given (the API's default page). @defaultValue 50 */
const DEFAULT_LIMIT = 50;
/** The API's largest page. */
const MAX_PAGE = 200;

/**
 * `chat messages`: the room's messages oldest first, `--limit` of them (50 by default) or `--all`,
 * from the start or `--after` a cursor. When more remain, stderr tells the cursor to go on from.
 */
export function messagesCommand(io: CliIo): Command {
  return addConnectionOptions(new Command('messages').description('list messages of the room, oldest first'))
    .option('--limit <n>', `print at most n messages (default ${DEFAULT_LIMIT})`, positiveInteger('--limit'))
    .option('--all', 'print every message, page after page')
    .option('--after <cursor>', 'start after this cursor (a previous listing\'s next cursor or a tail event ID)')
    .action(async (options: MessagesOptions) => {
      if (options.all && options.limit !== undefined) throw new UsageError('--all and --limit exclude each other');
      const ctx = await createContext(options, io);
      let remaining = options.all ? Infinity : (options.limit ?? DEFAULT_LIMIT);
      let cursor = options.after ?? null;
      while (remaining > 0) {
        const page = await ctx.client.listMessages(ctx.room, { cursor, limit: Math.min(remaining, MAX_PAGE) });
        for (const message of page.items) ctx.printer.result(message, formatMessage);
        remaining -= page.items.length;
        cursor = page.nextCursor ?? null;
        if (cursor === null) return;
      }
      ctx.printer.hint(`more: chat messages ${scopeFlags(ctx)} --after ${cursor}`);
    });
}
