import { Command } from 'commander';
import type { CliIo } from './cli-io.ts';
import { inboxCommand } from './commands/inbox.command.ts';
import { messagesCommand } from './commands/messages.command.ts';
import { postCommand } from './commands/post.command.ts';
import { roomCommand } from './commands/room.command.ts';
import { searchCommand } from './commands/search.command.ts';
import { tailCommand } from './commands/tail.command.ts';
import { webhooksCommand } from './commands/webhooks.command.ts';

const EPILOG = `
The token comes from --token-file (or CHAT_TOKEN_FILE) or CHAT_TOKEN, never from a flag (flags show
in ps); the file is read again when the service refuses the token. No token goes over plain http to a host that is not
loopback without --allow-insecure-http (or CHAT_ALLOW_INSECURE_HTTP=1).
Exit codes: 0 success, 1 the service answered with an error (code and request ID on stderr), 2 usage error.`;

/** Applies to a command and all its subcommands what `addCommand` does not pass on. */
function configureTree(command: Command, io: CliIo): void {
  command
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) });
  for (const sub of command.commands) configureTree(sub, io);
}

/** The `chat` command and its subcommands. */
export function buildProgram(io: CliIo): Command {
  const program = new Command('chat')
    .description('Chat for source repositories, from a terminal or a script')
    .version('0.1.0')
    .addHelpText('after', EPILOG)
    .addCommand(roomCommand(io))
    .addCommand(messagesCommand(io))
    .addCommand(postCommand(io))
    .addCommand(tailCommand(io))
    .addCommand(inboxCommand(io))
    .addCommand(searchCommand(io))
    .addCommand(webhooksCommand(io));
  configureTree(program, io);
  return program;
}
