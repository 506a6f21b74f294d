/**
 * The settings of `pnpm dev-token` (token-main.ts), read from the environment once at start: which
 * development core it asks. Clients and examples name that core `CHAT_CORE_URL` too.
 */
import { loadConfig } from '@chat/service-config';
import { z } from 'zod';

export const TokenEnvSchema = z.object({
  CHAT_CORE_URL: z
    .url({ protocol: /^https?$/ })
    .default('http://127.0.0.1:8081')
    .describe("the development core that mints demo tokens (`pnpm dev-token`, the echo bot); `pnpm start`'s dev-core listens on `DEV_CORE_PORT`"),
});

export interface TokenCliConfig {
  /** Without a trailing slash. */
  coreUrl: string;
}

export function loadTokenConfig(env: NodeJS.ProcessEnv): TokenCliConfig {
  return loadConfig(TokenEnvSchema, env, (e) => ({ coreUrl: e.CHAT_CORE_URL.replace(/\/+$/, '') }));
}
