import { Command } from 'commander';
import type { WebhookDeadLetter } from '@chat/client';
import { createClientContext, type ConnectionOptions } from '../cli-context.ts';
import type { CliIo } from '../cli-io.ts';
import { formatCreatedWebhook, formatDeadLetter, formatDeletedWebhook, formatRedelivery, formatWebhook } from '../output/webhook-formatters.ts';
import { UsageError } from '../usage-error.ts';
import { addConnectionOptions, positiveInteger } from './connection-options.ts';

interface CreateOptions extends ConnectionOptions {
  secret?: string;
}

interface DeadLetterOptions extends ConnectionOptions {
  limit?: number;
  all?: boolean;
  after?: string;
}

interface RedeliverOptions extends ConnectionOptions {
  delivery: string[];
}

/** Dead letters printed when neither `--limit` nor `--all` is given (the API's default page). @defaultValue 50 */
const DEFAULT_LIMIT = 50;
const MAX_PAGE = 200;
/** Delivery IDs one redelivery request names at most (the API's bound). */
const MAX_REDELIVERY_IDS = 100;

const HELP_AFTER = `
A webhook receives your notifications (every repository you may read) as signed HTTPS POSTs, from
its registration on. Its receiver checks each delivery with the SDK's verifyWebhook and the secret
that \`chat webhooks create\` prints once. A delivery that fails every retry becomes a dead letter:
\`chat webhooks dead-letters ID\` lists them, \`chat webhooks redeliver ID\` sends them again under the
same delivery IDs.

Examples:
  chat webhooks create https://bot.example/chat-hook
  chat webhooks list
  chat webhooks dead-letters 01J... --json
  chat webhooks redeliver 01J... --delivery 01J....01J...
  chat webhooks delete 01J...`;

const withConnection = (command: Command) => addConnectionOptions(command, { branch: false, repository: false });

function createCommand(io: CliIo): Command {
  // The receiver is an argument: --url names the service, as on every command.
  return withConnection(new Command('create').description('register a webhook; prints its ID and its signing secret, shown this once'))
    .argument('<receiver-url>', 'where deliveries go: https (plain http only to loopback, where the service allows it)')
    .option('--secret <secret>', 'the signing secret, 16 to 256 printable ASCII characters (shows in ps: leave it out to have the service make one)')
    .action(async (receiverUrl: string, options: CreateOptions) => {
      const ctx = await createClientContext(options, io);
      const created = await ctx.client.createWebhook({ url: receiverUrl, ...(options.secret === undefined ? {} : { secret: options.secret }) });
      ctx.printer.result(created, formatCreatedWebhook);
      ctx.printer.hint('the secret is not shown again: keep it where the receiver reads it');
    });
}

function listCommand(io: CliIo): Command {
  return withConnection(new Command('list').description('list your webhooks, oldest first')).action(async (options: ConnectionOptions) => {
    const ctx = await createClientContext(options, io);
    const webhooks = await ctx.client.listWebhooks();
    for (const webhook of webhooks) ctx.printer.result(webhook, formatWebhook);
    if (webhooks.length === 0) ctx.printer.hint('no webhooks: chat webhooks create RECEIVER-URL registers one');
  });
}

function deleteCommand(io: CliIo): Command {
  return withConnection(new Command('delete').description('remove a webhook, its pending deliveries and its dead letters'))
    .argument('<webhook-id>', 'the webhook to remove')
    .action(async (webhookId: string, options: ConnectionOptions) => {
      const ctx = await createClientContext(options, io);
      await ctx.client.deleteWebhook(webhookId);
      ctx.printer.result({ webhookId, deleted: true }, formatDeletedWebhook);
    });
}

function deadLettersCommand(io: CliIo): Command {
  return withConnection(new Command('dead-letters').description('list the deliveries of a webhook that failed every attempt, in the order they died'))
    .argument('<webhook-id>', 'the webhook')
    .option('--limit <n>', `print at most n dead letters (default ${DEFAULT_LIMIT})`, positiveInteger('--limit'))
    .option('--all', 'print every dead letter, page after page')
    .option('--after <cursor>', 'go on after this cursor (what a previous listing printed after "more:")')
    .action(async (webhookId: string, options: DeadLetterOptions) => {
      if (options.all && options.limit !== undefined) throw new UsageError('--all and --limit exclude each other');
      const ctx = await createClientContext(options, io);
      let remaining = options.all ? Infinity : (options.limit ?? DEFAULT_LIMIT);
      let cursor = options.after ?? null;
      const listed: WebhookDeadLetter[] = [];
      while (remaining > 0) {
        const page = await ctx.client.listWebhookDeadLetters(webhookId, { cursor, limit: Math.min(remaining, MAX_PAGE) });
        listed.push(...page.items);
        remaining -= page.items.length;
        cursor = page.nextCursor ?? null;
        if (cursor === null) break;
      }
      for (const letter of listed) ctx.printer.result(letter, formatDeadLetter);
      if (listed.length === 0 && cursor === null) ctx.printer.hint('no dead letters');
      if (cursor !== null) ctx.printer.hint(`more: chat webhooks dead-letters ${webhookId} --after ${cursor}`);
    });
}

function redeliverCommand(io: CliIo): Command {
  return withConnection(new Command('redeliver').description('send dead letters of a webhook again, under their delivery IDs: those named, or every one'))
    .argument('<webhook-id>', 'the webhook')
    .option('--delivery <delivery-id>', `a dead letter to send again (repeat it, up to ${MAX_REDELIVERY_IDS}); none: every dead letter`, (value: string, previous: string[]) => [...previous, value], [])
    .action(async (webhookId: string, options: RedeliverOptions) => {
      if (options.delivery.length > MAX_REDELIVERY_IDS) throw new UsageError(`at most ${MAX_REDELIVERY_IDS} --delivery per request`);
      const ctx = await createClientContext(options, io);
      const result = await ctx.client.redeliverWebhookDeliveries(webhookId, options.delivery.length > 0 ? { deliveryIds: options.delivery } : {});
      ctx.printer.result(result, formatRedelivery);
      if (result.redelivering.length === 0) ctx.printer.hint(options.delivery.length > 0 ? 'none of these is a dead letter waiting for redelivery' : 'no dead letters to redeliver');
    });
}

/** `chat webhooks create|list|delete|dead-letters|redeliver`: your notifications by signed POST. */
export function webhooksCommand(io: CliIo): Command {
  return new Command('webhooks')
    .description('your notifications by signed HTTPS POST: create, list, delete, dead-letters, redeliver')
    .addHelpText('after', HELP_AFTER)
    .addCommand(createCommand(io))
    .addCommand(listCommand(io))
    .addCommand(deleteCommand(io))
    .addCommand(deadLettersCommand(io))
    .addCommand(redeliverCommand(io));
}
