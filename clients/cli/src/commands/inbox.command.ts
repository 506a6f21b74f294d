import { Command } from 'commander';
import type { AcknowledgeInboxRequest, AcknowledgeInboxResponse, ChatEventStream, InboxNotificationEvent, InboxPageResponse, NotificationResponse, StreamStatus } from '@chat/client';
import { createClientContext, createContext, type ClientContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { MAX_MESSAGES_READ_PER_ROOM, messageFirstLines } from '../message-first-lines.ts';
import { formatAcknowledgement, formatNotification } from '../output/formatters.ts';
import { UsageError } from '../usage-error.ts';
import { addConnectionOptions, positiveInteger } from './connection-options.ts';
import { followStream, scopeFlags } from './follow-stream.ts';

interface InboxOptions extends ConnectionOptions {
  allRepositories?: boolean;
}

interface ListOptions extends InboxOptions {
  limit?: number;
  all?: boolean;
  after?: string;
}

interface TailOptions extends InboxOptions {
  after?: string;
  fromStart?: boolean;
}

interface AckOptions extends InboxOptions {
  expected?: string;
}

/** Notifications printed when neither `--limit` nor `--all` is given (the API's default page). @defaultValue 50 */
const DEFAULT_LIMIT = 50;
const MAX_PAGE = 200;

/**
 * The inbox a command works on: the caller's in one repository, or its feed across every repository
 * it may read (`--all-repositories`). Their cursors differ (a feed cursor names a position in the
 * feed), so each command keeps to the cursors of the inbox it names.
 */
interface InboxView {
  ctx: ClientContext;
  list(cursor: string | null, limit: number): Promise<InboxPageResponse>;
  stream(lastEventId: string | null, onStatus: (status: StreamStatus) => void): ChatEventStream<InboxNotificationEvent>;
  acknowledge(body: AcknowledgeInboxRequest): Promise<AcknowledgeInboxResponse>;
  /**
   * The position of a page's last notification in this inbox's cursors (null for an empty page): a
   * notification's own `cursor` in a repository inbox; in the feed, the page's `nextCursor`, which
   * names the feed position of its last item.
   */
  endOf(page: InboxPageResponse): string | null;
  /** The flags that name this inbox in a printed command. */
  flags: string;
}

function withInboxOptions(command: Command): Command {
  return addConnectionOptions(command, { branch: false }).option(
    '--all-repositories',
    'your notifications across every repository you may read, in one inbox (instead of --repository)',
  );
}

async function openInbox(options: InboxOptions, io: CliIo): Promise<InboxView> {
  if (options.allRepositories) {
    if (options.repository !== undefined) throw new UsageError('--all-repositories and --repository exclude each other');
    const ctx = await createClientContext(options, io);
    return {
      ctx,
      list: (cursor, limit) => ctx.client.listPrincipalInbox({ cursor, limit }),
      stream: (lastEventId, onStatus) => ctx.client.streamPrincipalInbox({ lastEventId }, { onStatus }),
      acknowledge: (body) => ctx.client.acknowledgePrincipalInbox(body),
      endOf: (page) => (page.items.length === 0 ? null : (page.nextCursor ?? null)),
      flags: '--all-repositories',
    };
  }
  const ctx = await createContext(options, io);
  const { repositoryId } = ctx;
  return {
    ctx,
    list: (cursor, limit) => ctx.client.listRepositoryInbox(repositoryId, { cursor, limit }),
    stream: (lastEventId, onStatus) => ctx.client.streamInbox({ repositoryId, lastEventId }, { onStatus }),
    acknowledge: (body) => ctx.client.acknowledgeRepositoryInbox(repositoryId, body),
    endOf: (page) => page.items.at(-1)?.cursor ?? null,
    flags: scopeFlags(ctx),
  };
}

function listCommand(io: CliIo): Command {
  return withInboxOptions(new Command('list').description('list your notifications, oldest first, each with its message\'s first line (● = not acknowledged)'))
    .option('--limit <n>', `print at most n notifications (default ${DEFAULT_LIMIT})`, positiveInteger('--limit'))
    .option('--all', 'print every notification, page after page')
    .option('--after <cursor>', 'start after this cursor (a notification cursor, or with --all-repositories a feed cursor)')
    .action(async (options: ListOptions) => {
      if (options.all && options.limit !== undefined) throw new UsageError('--all and --limit exclude each other');
      const inbox = await openInbox(options, io);
      const { ctx } = inbox;
      let remaining = options.all ? Infinity : (options.limit ?? DEFAULT_LIMIT);
      let cursor = options.after ?? null;
      let checkpoint: string | null = null;
      const listed: NotificationResponse[] = [];
      for (;;) {
        const page = await inbox.list(cursor, Math.min(remaining, MAX_PAGE));
        checkpoint = page.acknowledgedCursor ?? null;
        listed.push(...page.items);
        remaining -= page.items.length;
        cursor = page.items.length === 0 ? null : (page.nextCursor ?? null);
        if (cursor === null || remaining <= 0) break;
      }
      // --json prints the API's objects alone; the texts are for the person reading.
      const lines = ctx.printer.json ? new Map<string, string>() : await messageFirstLines(ctx.client, listed);
      for (const notification of listed) ctx.printer.result(notification, (n, p) => formatNotification(n, p, lines.get(n.messageId)));
      if (!ctx.printer.json && listed.some((n) => !lines.has(n.messageId))) {
        ctx.printer.hint(`a message text is not shown when its room holds more than ${MAX_MESSAGES_READ_PER_ROOM} messages before it`);
      }
      ctx.printer.hint(checkpoint === null ? 'nothing acknowledged yet' : `acknowledged through ${checkpoint}`);
      if (cursor !== null) ctx.printer.hint(`more: chat inbox list ${inbox.flags} --after ${cursor}`);
    });
}

/** The inbox's checkpoint, the start of `inbox tail` unless told otherwise. */
async function checkpointOf(inbox: InboxView): Promise<string | null> {
  return (await inbox.list(null, 1)).acknowledgedCursor ?? null;
}

function tailCommand(io: CliIo): Command {
  return withInboxOptions(new Command('tail').description('follow your new notifications live, from the acknowledged checkpoint'))
    .option('--after <cursor>', 'resume after this cursor (what Ctrl-C printed)')
    .option('--from-start', 'replay the whole inbox first, acknowledged notifications included')
    .action(async (options: TailOptions) => {
      if (options.after !== undefined && options.fromStart) throw new UsageError('--after and --from-start exclude each other');
      const inbox = await openInbox(options, io);
      const start = options.after ?? (options.fromStart ? null : await checkpointOf(inbox));
      await followStream(
        inbox.ctx,
        (onStatus) => inbox.stream(start, onStatus),
        (event) => inbox.ctx.printer.result(event.data, formatNotification),
        (cursor) => `chat inbox tail ${inbox.flags} --after ${cursor}`,
        start ?? undefined,
      );
    });
}

/** The cursor of the inbox's newest notification after `from` (in the inbox's own cursors), or null when none follows. */
async function newestAfter(inbox: InboxView, from: string | null): Promise<string | null> {
  let newest: string | null = null;
  let cursor = from;
  for (;;) {
    const page = await inbox.list(cursor, MAX_PAGE);
    newest = inbox.endOf(page) ?? newest;
    if (page.items.length === 0 || !page.nextCursor) return newest;
    cursor = page.nextCursor;
  }
}

function ackCommand(io: CliIo): Command {
  return withInboxOptions(new Command('ack').description('move the acknowledged checkpoint forward: through CURSOR, or through the newest notification'))
    .argument('[cursor]', 'cursor to acknowledge through: a notification cursor, or with --all-repositories a feed cursor (default: the newest notification)')
    .option('--expected <cursor>', 'compare-and-set: refuse (409 INBOX_CHECKPOINT_STALE) unless the checkpoint is this cursor')
    .action(async (cursor: string | undefined, options: AckOptions) => {
      const inbox = await openInbox(options, io);
      let through = cursor;
      let expected: string | null | undefined = options.expected;
      if (through === undefined) {
        // Through the newest, and only if no one moves the checkpoint meanwhile.
        const checkpoint = await checkpointOf(inbox);
        const newest = await newestAfter(inbox, checkpoint);
        if (newest === null) {
          inbox.ctx.printer.hint('nothing to acknowledge');
          return;
        }
        through = newest;
        if (expected === undefined) expected = checkpoint;
      }
      const result = await inbox.acknowledge({
        throughCursor: through,
        ...(expected !== undefined ? { expectedCursor: expected } : {}),
      });
      inbox.ctx.printer.result(result, formatAcknowledgement);
    });
}

/** `chat inbox list|tail|ack`: your mention inbox in one repository, or across all of them. */
export function inboxCommand(io: CliIo): Command {
  return new Command('inbox')
    .description('your mention notifications in a repository (or in all of them): list, tail, ack')
    .addCommand(listCommand(io))
    .addCommand(tailCommand(io))
    .addCommand(ackCommand(io));
}
