/**
 * `pnpm example:webhook-bot`: a bot that receives its mentions as signed webhook deliveries and
 * replies to each in its room. `pnpm example:webhook-bot --help` lists its settings (see `settings.ts`).
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChatClient, MemoryDeliveryIdStore, type TokenProvider } from '@chat/client';
import { deliveryHandler } from './delivery-handler.ts';
import { mintDemoBotToken } from './demo-token.ts';
import { HELP, readSettings, type TokenSource, type WebhookBotSettings } from './settings.ts';
import { ensureWebhook, type BotWebhook } from './webhook-registration.ts';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const say = (text: string) => process.stdout.write(`webhook-bot: ${text}\n`);
function fail(err: unknown): never {
  process.stderr.write(`webhook-bot: ${(err as Error).message}\n`);
  process.exit(1);
}

/** A file is read again, a minted token minted anew, when the service refuses the token. */
function tokenProvider(source: TokenSource): TokenProvider {
  if (source.kind === 'fixed') return source.token;
  if (source.kind === 'file') return () => readFile(source.path, 'utf8');
  let minted: Promise<string> | undefined;
  return ({ forceRefresh }) => {
    if (!minted || forceRefresh) minted = mintDemoBotToken(source.coreUrl);
    return minted;
  };
}

/** The webhook to receive on: registered (or found) at WEBHOOK_URL, or one registered elsewhere. */
async function webhookOf(client: ChatClient, settings: WebhookBotSettings): Promise<BotWebhook> {
  if (settings.webhookUrl !== undefined) return ensureWebhook(client, settings.webhookUrl, settings.secret);
  const story = 'WEBHOOK_URL is not set: receiving the deliveries of a webhook registered elsewhere, signed with WEBHOOK_SECRET';
  return { webhook: undefined, secret: settings.secret!, ownedByRun: false, story };
}

let settings: WebhookBotSettings;
try {
  settings = readSettings(process.env);
} catch (err) {
  fail(err);
}
if (settings.defaultUrl) say(`CHAT_URL is not set: using the local service at ${settings.baseUrl}`);
const client = new ChatClient({ baseUrl: settings.baseUrl, token: tokenProvider(settings.token), allowInsecureHttp: settings.allowInsecureHttp });

// The receiver listens before the webhook is registered, since a delivery may follow the
// registration at once; until the secret is known it answers 503, which the service retries.
const inHand = new Set<Promise<void>>();
let handle: ReturnType<typeof deliveryHandler> | undefined;
const server = createServer((req, res) => {
  if (!handle) {
    res.writeHead(503, { 'retry-after': '1' }).end();
    return;
  }
  const handling = handle(req, res).catch((err: unknown) => {
    say(`unexpected failure: ${(err as Error).message}`);
    if (!res.headersSent) res.writeHead(500).end();
  });
  inHand.add(handling);
  void handling.finally(() => inHand.delete(handling));
});
server.listen(settings.listen.port, settings.listen.host);
await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => fail(err))]);
say(`listening on http://${settings.listen.host}:${(server.address() as AddressInfo).port}`);

let webhook: BotWebhook;
try {
  webhook = await webhookOf(client, settings);
} catch (err) {
  server.close();
  fail(err);
}
say(webhook.story);
handle = deliveryHandler({ client, secret: webhook.secret, deliveries: new MemoryDeliveryIdStore(), say });
say('replying to every mention of the bot (Ctrl-C stops)');

let stopping = false;
/** Stops taking deliveries, answers those in hand, and removes this run's own webhook. */
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`${signal}: answering the deliveries in hand`);
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  await Promise.all([...inHand]);
  await closed;
  const own = webhook.ownedByRun ? webhook.webhook : undefined;
  if (own) {
    await client.deleteWebhook(own.webhookId).then(
      () => say(`removed webhook ${own.webhookId}`),
      (err: unknown) => say(`could not remove webhook ${own.webhookId}: ${(err as Error).message}`),
    );
  }
  say('stopped');
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(signal));
