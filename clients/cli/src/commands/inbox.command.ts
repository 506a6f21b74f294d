import { Command } from 'commander';
import type { NotificationResponse } from '@chat/client';
import { createContext, type CliContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { MAX_MESSAGES_READ_PER_ROOM, messageFirstLines } from '../message-first-lines.ts';
import { formatAcknowledgement, formatNotification } from '../output/formatters.ts';
import { UsageError } from '../usage-error.ts';
import { addConnectionOptions, positiveInteger } from './connection-options.ts';
import { followStream, scopeFlags } from './follow-stream.ts';

interface ListOptions extends ConnectionOptions {
  limit?: number;
  all?: boolean;
  after?: string;
}

interface TailOptions extends ConnectionOptions {
  after?: string;
  fromStart?: boolean;
}

interface AckOptions extends ConnectionOptions {
  expected?: string;
}

/** Notifications printed when neither `--limit` nor `--all` is given (the API's default page). @defaultValue 50 */
const DEFAULT_LIMIT = 50;
const MAX_PAGE = 200;

const inboxContext = (options: ConnectionOptions, io: CliIo) => createContext(options, io);

function listCommand(io: CliIo): Command {
  return addConnectionOptions(new Command('list').description('list your notifications in the repository, oldest first, each with its message\'s first line (● = not acknowledged)'), { branch: false })
    .option('--limit <n>', `print at most n notifications (default ${DEFAULT_LIMIT})`, positiveInteger('--limit'))
    .option('--all', 'print every notification, page after page')
    .option('--after <cursor>', 'start after this notification cursor')
    .action(async (options: ListOptions) => {
      if (options.all && options.limit !== undefined) throw new UsageError('--all and --limit exclude each other');
      const ctx = await inboxContext(options, io);
      let remaining = options.all ? Infinity : (options.limit ?? DEFAULT_LIMIT);
      let cursor = options.after ?? null;
      let checkpoint: string | null = null;
      const listed: NotificationResponse[] = [];
      while (remaining > 0) {
        const page = await ctx.client.listRepositoryInbox(ctx.repositoryId, { cursor, limit: Math.min(remaining, MAX_PAGE) });
        checkpoint = page.acknowledgedCursor ?? null;
        listed.push(...page.items);
        remaining -= page.items.length;
        cursor = page.nextCursor ?? null;
        if (cursor === null) break;
      }
      // --json prints the API's objects alone; the texts are for the person reading.
      const lines = ctx.printer.json ? new Map<string, string>() : await messageFirstLines(ctx.client, listed);
      for (const notification of listed) ctx.printer.result(notification, (n, p) => formatNotification(n, p, lines.get(n.messageId)));
      if (!ctx.printer.json && listed.some((n) => !lines.has(n.messageId))) {
        ctx.printer.hint(`a message text is not shown when its room holds more than ${MAX_MESSAGES_READ_PER_ROOM} messages before it`);
      }
      ctx.printer.hint(checkpoint === null ? 'nothing acknowledged yet' : `acknowledged through ${checkpoint}`);
      if (cursor !== null) ctx.printer.hint(`more: chat inbox list ${scopeFlags(ctx)} --after ${cursor}`);
    });
}

/** The inbox's checkpoint, the start of `inbox tail` unless told otherwise. */
async function checkpointOf(ctx: CliContext): Promise<string | null> {
  return (await ctx.client.listRepositoryInbox(ctx.repositoryId, { limit: 1 })).acknowledgedCursor ?? null;
}

function tailCommand(io: CliIo): Command {
  return addConnectionOptions(new Command('tail').description('follow your new notifications live, from the acknowledged checkpoint'), { branch: false })
    .option('--after <cursor>', 'resume after this notification cursor (what Ctrl-C printed)')
    .option('--from-start', 'replay the whole inbox first, acknowledged notifications included')
    .action(async (options: TailOptions) => {
      if (options.after !== undefined && options.fromStart) throw new UsageError('--after and --from-start exclude each other');
      const ctx = await inboxContext(options, io);
      const start = options.after ?? (options.fromStart ? null : await checkpointOf(ctx));
      await followStream(
        ctx,
        (onStatus) => ctx.client.streamInbox({ repositoryId: ctx.repositoryId, lastEventId: start }, { onStatus }),
        (event) => ctx.printer.result(event.data, formatNotification),
        (cursor) => `chat inbox tail ${scopeFlags(ctx)} --after ${cursor}`,
        start ?? undefined,
      );
    });
}

/** The cursor of the newest notification after `from`, or null when there is none. */
async function newestAfter(ctx: CliContext, from: string | null): Promise<string | null> {
  let newest: string | null = null;
  for await (const notification of ctx.client.inboxNotifications({ repositoryId: ctx.repositoryId, after: from })) newest = notification.cursor;
  return newest;
}

function ackCommand(io: CliIo): Command {
  return addConnectionOptions(
    new Command('ack').description('move the acknowledged checkpoint forward: through CURSOR, or through the newest notification'),
    { branch: false },
  )
    .argument('[cursor]', 'notification cursor to acknowledge through (default: the newest notification)')
    .option('--expected <cursor>', 'compare-and-set: refuse (409 INBOX_CHECKPOINT_STALE) unless the checkpoint is this cursor')
    .action(async (cursor: string | undefined, options: AckOptions) => {
      const ctx = await inboxContext(options, io);
      let through = cursor;
      let expected: string | null | undefined = options.expected;
      if (through === undefined) {
        // Through the newest, and only if no one moves the checkpoint meanwhile.
        const checkpoint = await checkpointOf(ctx);
        const newest = await newestAfter(ctx, checkpoint);
        if (newest === null) {
          ctx.printer.hint('nothing to acknowledge');
          return;
        }
        through = newest;
        if (expected === undefined) expected = checkpoint;
      }
      const result = await ctx.client.acknowledgeRepositoryInbox(ctx.repositoryId, {
        throughCursor: through,
        ...(expected !== undefined ? { expectedCursor: expected } : {}),
      });
      ctx.printer.result(result, formatAcknowledgement);
    });
}

/** `chat inbox list|tail|ack`: your mention inbox in one repository. */
export function inboxCommand(io: CliIo): Command {
  return new Command('inbox')
    .description('your mention notifications in a repository: list, tail, ack')
    .addCommand(listCommand(io))
    .addCommand(tailCommand(io))
    .addCommand(ackCommand(io));
}
