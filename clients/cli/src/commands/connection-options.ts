import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_URL } from '../cli-context.ts';

/**
 * Adds the options every command takes, so each command's `--help` lists them. A command on the
 * caller's own data across repositories (`repository: false`) takes no `--repository`.
 */
export function addConnectionOptions(command: Command, scope: { branch: boolean; repository?: boolean } = { branch: true }): Command {
  command.option('--url <url>', `service base URL (env CHAT_URL, default ${DEFAULT_URL})`);
  if (scope.repository !== false) command.option('--repository <ulid>', 'repository ID (env CHAT_REPOSITORY)');
  if (scope.branch) command.option('--branch <ulid>', 'branch ID: the branch room instead of the repository room');
  return command
    .option('--token-file <path>', 'read the bearer token from this file, again whenever the service refuses it (env CHAT_TOKEN_FILE; else env CHAT_TOKEN; never a flag)')
    .option('--allow-insecure-http', 'send the token over plain http to a host that is not loopback (env CHAT_ALLOW_INSECURE_HTTP=1)')
    .option('--json', 'print one API object per line')
    .addOption(new Option('--token <token>').hideHelp());
}

/** Parses a positive integer option value (commander hands it over as a string). */
export function positiveInteger(name: string) {
  return (value: string): number => {
    if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError(`${name} must be a positive integer, not ${JSON.stringify(value)}`);
    return Number(value);
  };
}
