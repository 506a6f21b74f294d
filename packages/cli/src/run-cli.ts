import { ChatApiError, ChatNetworkError, ChatStreamError } from '@chat/client';
import { CommanderError } from 'commander';
import type { CliIo } from './cli-io.ts';
import { terminalSafeLine } from './output/terminal-text.ts';
import { buildProgram } from './program.ts';
import { UsageError } from './usage-error.ts';

/** Exit codes of `chat`. */
export const EXIT = { ok: 0, apiError: 1, usage: 2 } as const;

/** Writes what went wrong to stderr and picks the exit code; service text is made terminal-safe. */
function report(err: unknown, io: CliIo): number {
  const say = (text: string) => io.stderr.write(`chat: ${text}\n`);
  if (err instanceof CommanderError) {
    // Commander has written its message (or the help) already; asked-for help and --version exit 0,
    // help shown because no command was given is a usage error.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof UsageError) {
    say(err.message);
    return EXIT.usage;
  }
  if (err instanceof ChatApiError) {
    say(terminalSafeLine(err.message));
    say(`request ID: ${err.requestId === undefined ? 'none' : terminalSafeLine(err.requestId)}`);
    if (err.retryAfter !== undefined) say(`retry after: ${err.retryAfter} s`);
    return EXIT.apiError;
  }
  if (err instanceof ChatStreamError) {
    say(`stream stopped (${err.reason}): ${terminalSafeLine(err.message)}`);
    return EXIT.apiError;
  }
  if (err instanceof ChatNetworkError) {
    say(`cannot reach the service: ${terminalSafeLine(err.message)}`);
    return EXIT.apiError;
  }
  say(`unexpected failure: ${terminalSafeLine(err instanceof Error ? err.message : String(err))}`);
  return EXIT.apiError;
}

/** Runs `chat` with `argv` (as process.argv: node, script, args...) and resolves with the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    return report(err, io);
  }
}
