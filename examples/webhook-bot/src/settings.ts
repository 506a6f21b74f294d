/**
 * The webhook bot's settings: the variables every example reads, with the loopback defaults that
 * `pnpm start` listens on, and where the bot itself listens for deliveries.
 */

/** Where `pnpm start` serves chat and its development core on this machine. */
export const LOCAL_CHAT_URL = 'http://127.0.0.1:8080';
export const LOCAL_CORE_URL = 'http://127.0.0.1:8081';
/** Where the bot listens when told nothing. */
const DEFAULT_PORT = 8090;
const DEFAULT_HOST = '127.0.0.1';

export const HELP = `pnpm example:webhook-bot: receives the bot's mentions by webhook and replies to each in its room.

With \`pnpm start\` running on this machine nothing needs setting: the bot mints a token for the demo
bot b_ci from the development core, listens on http://${DEFAULT_HOST}:${DEFAULT_PORT}/hook, registers that URL
as b_ci's webhook (the local service allows plain http to loopback) and removes it when it stops.

Environment:
  CHAT_URL           the chat service (default ${LOCAL_CHAT_URL}, the local \`pnpm start\`)
  CHAT_CORE_URL      the development core that mints the demo tokens (default ${LOCAL_CORE_URL})
  CHAT_TOKEN_FILE    a file holding the bot's token, read again whenever the service refuses it
  CHAT_TOKEN         the bot's token itself (cannot be renewed)
  CHAT_ALLOW_INSECURE_HTTP=1  allow a plain http CHAT_URL that is not loopback
  WEBHOOK_BOT_HOST   the address the bot listens on (default ${DEFAULT_HOST})
  WEBHOOK_BOT_PORT   the port the bot listens on (default ${DEFAULT_PORT})
  WEBHOOK_URL        register this URL as the bot's webhook at start, unless one of its webhooks
                     has it already (default http://WEBHOOK_BOT_HOST:WEBHOOK_BOT_PORT/hook when
                     WEBHOOK_SECRET is unset)
  WEBHOOK_SECRET     the webhook's signing secret. Set it for a webhook that outlives the bot (one
                     registered with \`chat webhooks create\`, or by this bot with WEBHOOK_URL): then
                     deliveries that fail while the bot is down come again once it is back. Unset,
                     the bot registers WEBHOOK_URL with a secret the service makes and removes that
                     webhook when it stops.

Ctrl-C or SIGTERM stops it cleanly: the deliveries in hand are answered first.
`;

/** Where the bot's token comes from. */
export type TokenSource = { kind: 'file'; path: string } | { kind: 'fixed'; token: string } | { kind: 'mint'; coreUrl: string };

export interface WebhookBotSettings {
  baseUrl: string;
  /** True when CHAT_URL was not set and the local service is used. */
  defaultUrl: boolean;
  token: TokenSource;
  allowInsecureHttp: boolean;
  listen: { host: string; port: number };
  /** The URL to register at start, if any. */
  webhookUrl: string | undefined;
  /** The webhook's secret; unset means the bot registers a webhook of its own for this run. */
  secret: string | undefined;
}

/** The settings, or an Error naming the variable that is wrong. */
export function readSettings(env: NodeJS.ProcessEnv): WebhookBotSettings {
  const token: TokenSource = env.CHAT_TOKEN_FILE
    ? { kind: 'file', path: env.CHAT_TOKEN_FILE }
    : env.CHAT_TOKEN
      ? { kind: 'fixed', token: env.CHAT_TOKEN }
      : { kind: 'mint', coreUrl: (env.CHAT_CORE_URL || LOCAL_CORE_URL).replace(/\/+$/, '') };
  const port = Number(env.WEBHOOK_BOT_PORT || DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`WEBHOOK_BOT_PORT=${env.WEBHOOK_BOT_PORT} is not a port`);
  const host = env.WEBHOOK_BOT_HOST || DEFAULT_HOST;
  const secret = env.WEBHOOK_SECRET || undefined;
  return {
    baseUrl: env.CHAT_URL || LOCAL_CHAT_URL,
    defaultUrl: !env.CHAT_URL,
    token,
    allowInsecureHttp: env.CHAT_ALLOW_INSECURE_HTTP === '1',
    listen: { host, port },
    webhookUrl: env.WEBHOOK_URL || (secret === undefined ? `http://${host}:${port}/hook` : undefined),
    secret,
  };
}
