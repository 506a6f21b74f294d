/**
 * dev-core's settings, read from the environment once at start and handed on as one typed, nested
 * object. Nothing else reads `process.env`.
 */
import {
  DEVELOPMENT_SERVICE_TOKEN,
  httpFields,
  loadConfig as parseConfig,
  logLevel,
  port,
  type HttpServerLimits,
} from '@chat/service-config';
import { z } from 'zod';

/** Service token chat presents by default (chat's `CORE_SERVICE_TOKEN` has the same default). Dev only. */
export const DEFAULT_SERVICE_TOKEN = DEVELOPMENT_SERVICE_TOKEN;

export const DevCoreEnvSchema = z.object({
  DEV_CORE_PORT: port.default(8081).describe('port of dev-core (0 picks a free one and prints it)'),
  DEV_CORE_HOST: z.string().min(1).default('127.0.0.1').describe('interface dev-core binds'),
  DEV_CORE_FIXTURE: z.string().min(1).optional().describe("dev-core's data file; unset means the bundled demo fixture"),
  DEV_CORE_KEYS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("folder where dev-core keeps its signing keys (made at first start, readable by the owner only), so its tokens stay valid after a restart on the same port; unset means new keys at every start (the all-in-one keeps them in `DATA_DIR`)"),
  DEV_CORE_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional().describe("base URL its token issuers are named after (must equal chat's `CORE_URL`); unset means `http://127.0.0.1:<port>`"),
  DEV_CORE_SERVICE_TOKEN: z.string().min(16).default(DEFAULT_SERVICE_TOKEN).describe('service token dev-core expects from chat; the default is public, and the chat services refuse it outside development mode'),
  DEV_CORE_LOG_LEVEL: logLevel.default('info').describe("dev-core's pino level"),
  HTTP_HEADERS_TIMEOUT_MS: httpFields.HTTP_HEADERS_TIMEOUT_MS,
  HTTP_REQUEST_TIMEOUT_MS: httpFields.HTTP_REQUEST_TIMEOUT_MS,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: httpFields.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  HTTP_MAX_CONNECTIONS: httpFields.HTTP_MAX_CONNECTIONS,
});

export interface DevCoreConfig {
  http: { port: number; host: string; limits: HttpServerLimits };
  fixturePath: string | undefined;
  /** undefined: new signing keys at every start. */
  keysDir: string | undefined;
  publicUrl: string | undefined;
  serviceToken: string;
  log: { level: z.output<typeof logLevel> };
}

/** Parses dev-core's environment once at start; a bad variable stops the process with its name. */
export function loadConfig(env: NodeJS.ProcessEnv): DevCoreConfig {
  return parseConfig(DevCoreEnvSchema, env, (e) => {
    const config: DevCoreConfig = {
      http: {
        port: e.DEV_CORE_PORT,
        host: e.DEV_CORE_HOST,
        limits: {
          headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
          requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
          keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
          maxConnections: e.HTTP_MAX_CONNECTIONS,
        },
      },
      fixturePath: e.DEV_CORE_FIXTURE,
      keysDir: e.DEV_CORE_KEYS_DIR,
      publicUrl: e.DEV_CORE_PUBLIC_URL,
      serviceToken: e.DEV_CORE_SERVICE_TOKEN,
      log: { level: e.DEV_CORE_LOG_LEVEL },
    };
    return config;
  });
}
