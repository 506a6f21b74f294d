import { ChatApiError, ChatNetworkError, ChatStreamError, ChatTokenRejectedError } from '@chat/client';
import { CommanderError } from 'commander';
import type { CliIo } from './cli-io.ts';
import { terminalSafeLine } from './output/terminal-text.ts';
import { buildProgram } from './program.ts';
import { UsageError } from './usage-error.ts';

/** Exit codes of `chat`. */
const EXIT = { ok: 0, apiError: 1, usage: 2 } as const;

/** Whether the command line names `flag` (as `--flag value` or `--flag=value`). */
function given(argv: string[], flag: string): boolean {
  return argv.some((arg) => arg === flag || arg.startsWith(`${flag}=`));
}

/**
 * What to tell about a refused credential, in the terms the person supplied it in (the flag or the
 * variable), never the HTTP header it travelled in; undefined for every other error.
 */
function credentialAdvice(err: unknown, argv: string[], env: NodeJS.ProcessEnv): string | undefined {
  const refusal = err instanceof ChatStreamError && err.cause instanceof ChatTokenRejectedError ? err.cause : err;
  if (refusal instanceof ChatTokenRejectedError) {
    const source = given(argv, '--token-file')
      ? 'the token from --token-file (read again after the refusal)'
      : env.CHAT_TOKEN_FILE
        ? 'the token from CHAT_TOKEN_FILE (read again after the refusal)'
        : 'the token in CHAT_TOKEN';
    return `the service at ${refusal.baseUrl} refused ${source} (${refusal.code}): it has expired or been revoked, or the service no longer trusts what signed it; give a fresh token (--token-file PATH, CHAT_TOKEN_FILE or CHAT_TOKEN)`;
  }
  if (!(err instanceof ChatApiError)) return undefined;
  const source = given(argv, '--core-token-file') ? 'the core resource credential from --core-token-file' : 'the core resource credential in CHAT_CORE_TOKEN';
  if (err.code === 'CORE_RESOURCE_TOKEN_REJECTED') {
    return `${source} was refused (${err.code}): it must be an unexpired core resource token of the same person as the chat token; give a fresh one (--core-token-file PATH or CHAT_CORE_TOKEN)`;
  }
  if (err.code === 'CORE_RESOURCE_TOKEN_REQUIRED') {
    return `mentions in a person's message need that person's core resource credential (${err.code}): pass --core-token-file PATH or set CHAT_CORE_TOKEN`;
  }
  return undefined;
}

/** Writes what went wrong to stderr and picks the exit code; service text is made terminal-safe. */
function report(err: unknown, io: CliIo, argv: string[]): number {
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
  const advice = credentialAdvice(err, argv, io.env);
  if (advice !== undefined) {
    say(terminalSafeLine(advice));
    const requestId = err instanceof ChatApiError ? err.requestId : ((err as ChatStreamError).cause as ChatApiError).requestId;
    say(`request ID: ${requestId === undefined ? 'none' : terminalSafeLine(requestId)}`);
    return EXIT.apiError;
  }
  if (err instanceof ChatApiError) {
    say(terminalSafeLine(err.message));
    say(`request ID: ${err.requestId === undefined ? 'none' : terminalSafeLine(err.requestId)}`);
    if (err.retryAfter !== undefined) say(`retry after: ${err.retryAfter} s`);
    return EXIT.apiError;
  }
  if (err instanceof ChatStreamError) {
    say(`stream stopped (${err.reason}): ${terminalSafeLine(err.message)}`);
    // The service asks for fresh authority when a token nears its end or access changed; only a
    // token file can give a fresh one to a running tail.
    if (err.reason === 'reauthorize_repeated' || err.reason === 'reauthorize_denied') say('if the token expired, give a fresh one with --token-file PATH (a running tail reads it again)');
    return EXIT.apiError;
  }
  if (err instanceof ChatNetworkError) {
    say(terminalSafeLine(err.message));
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
    return report(err, io, argv);
  }
}
