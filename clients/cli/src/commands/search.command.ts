import { Command, Option } from 'commander';
import type { SearchOrder, SearchScope } from '@chat/client';
import { createContext, type CliContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { formatSearchResult } from '../output/formatters.ts';
import { UsageError } from '../usage-error.ts';
import { addConnectionOptions, positiveInteger } from './connection-options.ts';

interface SearchCommandOptions extends ConnectionOptions {
  roomOnly?: boolean;
  order?: SearchOrder;
  limit?: number;
  after?: string;
}

/** Results printed when `--limit` is not given: a screenful. @defaultValue 20 */
const DEFAULT_LIMIT = 20;
/** The API's largest page. */
const MAX_PAGE = 200;
const ORDERS: readonly SearchOrder[] = ['relevance', 'newest'];

const HELP_AFTER = `
The query: words, each found anywhere in a message (identifier parts, paths, URLs and commit prefixes
included), "exact phrases", and filters from:<principal ID>, mentions:<principal ID>,
in:repository or in:<branch ID>, before:<date>, after:<date>, has:code, has:link.

Examples:
  chat search --repository R parse_config
  chat search --repository R '"connection reset" from:u_alice after:2026-01-01' --order newest
  chat search --repository R --branch B 'has:link deploy'

Each result shows its time, room, sender and the fragments of the message that matched, the
matches in bold on a terminal and in [brackets] otherwise, then the message's cursor in its room:
chat messages --repository R [--branch B] --after CURSOR reads on from that message.`;

/** The whole repository, unless `--branch` or `--room-only` names one room. */
function scopeOf(ctx: CliContext, options: SearchCommandOptions): SearchScope {
  return ctx.room.branchId || options.roomOnly ? { room: ctx.room } : { repositoryId: ctx.repositoryId };
}

/** `text` as one shell word, so a printed command can be pasted as it is. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The flags of the "more" hint: the same search (scope and order) from its next page. */
function searchFlags(ctx: CliContext, options: SearchCommandOptions): string {
  const room = ctx.room.branchId ? ` --branch ${ctx.room.branchId}` : options.roomOnly ? ' --room-only' : '';
  return `--repository ${ctx.repositoryId}${room}${options.order ? ` --order ${options.order}` : ''}`;
}

/**
 * `chat search QUERY`: the messages of a repository (all its rooms, or one with `--branch` or
 * `--room-only`) that match the query, most relevant or newest first, `--limit` of them (20 by
 * default). When more remain, stderr tells the command that goes on from there.
 */
export function searchCommand(io: CliIo): Command {
  return addConnectionOptions(new Command('search').description('find messages of the repository by words, phrases and filters'), { branch: false })
    .argument('<query>', 'what to find, in the service\'s query language (quote it as one shell word)')
    .option('--branch <ulid>', 'search only this branch\'s room')
    .option('--room-only', 'search only the repository room')
    .addOption(new Option('--order <order>', 'relevance: most relevant first (the default); newest: newest first').choices(ORDERS))
    .option('--limit <n>', `print at most n results (default ${DEFAULT_LIMIT})`, positiveInteger('--limit'))
    .option('--after <cursor>', 'go on after this search cursor (what a previous search printed after "more:")')
    .addHelpText('after', HELP_AFTER)
    .action(async (query: string, options: SearchCommandOptions) => {
      if (options.branch !== undefined && options.roomOnly) throw new UsageError('--branch and --room-only exclude each other');
      const ctx = await createContext(options, io);
      const scope = scopeOf(ctx, options);
      let remaining = options.limit ?? DEFAULT_LIMIT;
      let cursor = options.after ?? null;
      let printed = 0;
      while (remaining > 0) {
        const page = await ctx.client.searchPage(scope, { q: query, order: options.order, limit: Math.min(remaining, MAX_PAGE), cursor });
        for (const result of page.items) ctx.printer.result(result, formatSearchResult);
        printed += page.items.length;
        remaining -= page.items.length;
        cursor = page.nextCursor ?? null;
        if (cursor === null || page.items.length === 0) break;
      }
      if (printed === 0 && options.after === undefined) ctx.printer.hint('no message matches');
      if (cursor !== null) ctx.printer.hint(`more: chat search ${shellWord(query)} ${searchFlags(ctx, options)} --after ${cursor}`);
    });
}
