import { Command } from 'commander';
import { createContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { formatMessage } from '../output/formatters.ts';
import { addConnectionOptions } from './connection-options.ts';
import { followStream, scopeFlags } from './follow-stream.ts';

interface TailOptions extends ConnectionOptions {
  after?: string;
}

/**
 * `chat tail`: follows the room's messages live (from the start of the room, or `--after` a cursor),
 * resuming across disconnects without losing or repeating one. Ctrl-C prints the cursor to resume from.
 */
export function tailCommand(io: CliIo): Command {
  return addConnectionOptions(new Command('tail').description('follow the room live; Ctrl-C prints the cursor to resume from'))
    .option('--after <cursor>', 'resume after this cursor (what Ctrl-C printed); without it the room is replayed from its start')
    .action(async (options: TailOptions) => {
      const ctx = await createContext(options, io);
      await followStream(
        ctx,
        (onStatus) => ctx.client.streamRoom({ ...ctx.room, lastEventId: options.after ?? null }, { onStatus }),
        (event) => ctx.printer.result(event.data, formatMessage),
        (cursor) => `chat tail ${scopeFlags(ctx)} --after ${cursor}`,
        options.after,
      );
    });
}
