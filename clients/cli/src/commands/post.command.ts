import { ULID_PATTERN } from '@chat/client';
import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { createContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { bindMentions, parseMentionOption, type MentionOption } from '../mention-spans.ts';
import { terminalSafeLine } from '../output/terminal-text.ts';
import { bareToken } from '../token-source.ts';
import { UsageError } from '../usage-error.ts';
import { addConnectionOptions } from './connection-options.ts';

interface PostOptions extends ConnectionOptions {
  mention?: MentionOption[];
  coreTokenFile?: string;
  idempotencyKey?: string;
}

async function readBody(argument: string | undefined, io: CliIo): Promise<string> {
  if (argument !== undefined && argument !== '-') return argument;
  if (argument === undefined && io.stdin.isTTY) throw new UsageError('no body: give it as an argument, or pipe it in (chat post - reads stdin)');
  // `echo`, a heredoc and an editor end the text with a line feed that is no part of the message;
  // only that one goes, so blank lines meant to end the body stay.
  return (await text(io.stdin)).replace(/\r?\n$/, '');
}

/** The core resource credential for mentions by a person, bare, from a file or CHAT_CORE_TOKEN (never a flag value). */
async function coreResourceToken(options: PostOptions, io: CliIo): Promise<string | undefined> {
  if (options.coreTokenFile !== undefined) {
    const token = await readFile(options.coreTokenFile, 'utf8').catch(() => {
      throw new UsageError(`cannot read the core token file ${options.coreTokenFile}`);
    });
    return bareToken(token, `the core token file ${options.coreTokenFile} (--core-token-file)`);
  }
  const fromEnv = io.env.CHAT_CORE_TOKEN;
  return fromEnv === undefined || fromEnv.trim() === '' ? undefined : bareToken(fromEnv, 'CHAT_CORE_TOKEN');
}

/**
 * `chat post`: appends one message. The body is the argument, or stdin when it is `-` or absent;
 * each `--mention KIND:ID` binds an `@ID` of the body. The SDK makes one Idempotency-Key and retries
 * with it, so a retried post never stores twice; `--idempotency-key` makes a post repeatable across runs.
 */
export function postCommand(io: CliIo): Command {
  return addConnectionOptions(new Command('post').description('append a message to the room (body from the argument or stdin)'))
    .argument('[body]', 'Markdown body; "-" or nothing reads stdin (one trailing line feed dropped)')
    .option('--mention <kind:id>', 'mention a human or bot whose @id is in the body (repeatable), e.g. bot:b_ci', (value: string, all: MentionOption[] | undefined) => [...(all ?? []), parseMentionOption(value)])
    .option('--core-token-file <path>', 'core resource credential, needed when a person mentions anyone (else env CHAT_CORE_TOKEN)')
    .option('--idempotency-key <ulid>', 'send with this key: a repeat of the same post answers with the stored message')
    .action(async (argument: string | undefined, options: PostOptions) => {
      if (options.idempotencyKey !== undefined && !ULID_PATTERN.test(options.idempotencyKey)) throw new UsageError('--idempotency-key must be a canonical ULID');
      const ctx = await createContext(options, io);
      const body = await readBody(argument, io);
      const mentions = bindMentions(body, options.mention ?? []);
      // A person's mentions (of anyone) need the core credential; a bot's need none, and a bot has none to give.
      const core = mentions.length > 0 ? await coreResourceToken(options, io) : undefined;
      const result = await ctx.client.appendMessage(
        ctx.room,
        { bodyMarkdown: body, ...(mentions.length > 0 ? { mentions } : {}) },
        { ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}), ...(core ? { coreResourceToken: core } : {}) },
      );
      ctx.printer.result(result.message, (message, p) => {
        const how = result.created ? 'posted' : 'already posted with this key';
        return `${how} ${p.bold(terminalSafeLine(message.messageId))} ${p.dim(`(idempotency key ${result.idempotencyKey})`)}\n`;
      });
    });
}
