/**
 * The echo bot's settings: the variables every example reads, with the loopback defaults that
 * `pnpm start` listens on.
 */

/** The demo repository of the fixture `pnpm start` loads. */
export const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';
/** Where `pnpm start` serves chat and its development core on this machine. */
export const LOCAL_CHAT_URL = 'http://127.0.0.1:8080';
export const LOCAL_CORE_URL = 'http://127.0.0.1:8081';

export const HELP = `pnpm example:echo-bot: answers every mention of the bot with an echo of the message.

With \`pnpm start\` running on this machine nothing needs setting: the bot mints a token for the demo
bot b_ci from the development core, and mints a fresh one whenever the service refuses it.

Environment:
  CHAT_URL           the chat service (default ${LOCAL_CHAT_URL}, the local \`pnpm start\`)
  CHAT_CORE_URL      the development core that mints the demo tokens (default ${LOCAL_CORE_URL});
                     set it when \`pnpm start\` runs with another DEV_CORE_PORT
  CHAT_TOKEN_FILE    a file holding the bot's token, read again whenever the service refuses it
  CHAT_TOKEN         the bot's token itself (cannot be renewed: the bot stops when it expires)
  CHAT_REPOSITORIES  repositories to follow, comma-separated (default the demo repository)
  CHAT_ALLOW_INSECURE_HTTP=1  allow a plain http CHAT_URL that is not loopback

Ctrl-C or SIGTERM stops it cleanly: the reply in hand is finished and the inbox acknowledged.
`;

/** Where the bot's token comes from. */
export type TokenSource = { kind: 'file'; path: string } | { kind: 'fixed'; token: string } | { kind: 'mint'; coreUrl: string };

export interface EchoBotSettings {
  baseUrl: string;
  /** True when CHAT_URL was not set and the local service is used. */
  defaultUrl: boolean;
  repositories: string[];
  token: TokenSource;
  allowInsecureHttp: boolean;
}

export function readSettings(env: NodeJS.ProcessEnv): EchoBotSettings {
  const token: TokenSource = env.CHAT_TOKEN_FILE
    ? { kind: 'file', path: env.CHAT_TOKEN_FILE }
    : env.CHAT_TOKEN
      ? { kind: 'fixed', token: env.CHAT_TOKEN }
      : { kind: 'mint', coreUrl: (env.CHAT_CORE_URL || LOCAL_CORE_URL).replace(/\/+$/, '') };
  return {
    baseUrl: env.CHAT_URL || LOCAL_CHAT_URL,
    defaultUrl: !env.CHAT_URL,
    repositories: (env.CHAT_REPOSITORIES || DEMO_REPOSITORY_ID).split(','),
    token,
    allowInsecureHttp: env.CHAT_ALLOW_INSECURE_HTTP === '1',
  };
}
