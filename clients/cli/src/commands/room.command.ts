import { Command } from 'commander';
import { createContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { formatRoom } from '../output/formatters.ts';
import { addConnectionOptions } from './connection-options.ts';

/** `chat room`: the metadata of the repository room, or of a branch room with `--branch`. */
export function roomCommand(io: CliIo): Command {
  return addConnectionOptions(new Command('room').description('show the metadata of the repository room (or a branch room with --branch)')).action(
    async (options: ConnectionOptions) => {
      const ctx = await createContext(options, io);
      ctx.printer.result(await ctx.client.getRoom(ctx.room), formatRoom);
    },
  );
}
