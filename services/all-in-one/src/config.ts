/**
 * The all-in-one process's settings: the API's and the gateway's, plus the embedded dev-core's and
 * the demo output, read from the environment once at start into one typed, nested object. The
 * all-in-one is a development setup, so it always runs in development mode.
 */
import { join } from 'node:path';
import { apiEnvFields, apiServiceConfigOf, type ApiServiceConfig } from '@chat/api';
import {
  coreFields,
  cursorConfigOf,
  cursorFields,
  databaseConfigOf,
  databaseFields,
  flag,
  httpConfigOf,
  httpFields,
  loadConfig,
  logConfigOf,
  logFields,
  port,
  redisConfigOf,
  redisFields,
  tracingConfigOf,
  tracingFields,
  webhookDeliveryConfigOf,
  webhookDeliveryFields,
  type CursorConfig,
  type DatabaseConfig,
  type HttpServerConfig,
  type RedisConfig,
  type TracingConfig,
  type WebhookDeliveryConfig,
} from '@chat/service-config';
import { DevCoreEnvSchema } from '@chat/dev-core';
import { gatewayEnvFields, gatewayServiceConfigOf, type GatewayServiceConfig } from '@chat/stream-gateway';
import { z } from 'zod';

/** The folder under `DATA_DIR` where the embedded dev-core keeps its signing keys. */
export const DEV_CORE_KEYS_FOLDER = 'dev-core-keys';

export const AllInOneEnvSchema = z.object({
  ...httpFields,
  ...databaseFields,
  ...redisFields,
  ...coreFields,
  ...cursorFields,
  ...logFields,
  ...apiEnvFields,
  ...gatewayEnvFields,
  ...webhookDeliveryFields,
  ...tracingFields,
  // The all-in-one is a developer's own machine's service, with demo tokens and dev-core's
  // token minting: it serves this machine only unless told otherwise. The distributed services keep
  // the shared default (every interface), which a pod needs.
  HOST: httpFields.HOST.unwrap().default('127.0.0.1').describe(httpFields.HOST.description ?? ''),
  DEV_CORE_PORT: port.default(8081).describe('port of dev-core (0 picks a free one and prints it); in the all-in-one, unused when `CORE_URL` is set'),
  DEV_CORE_HOST: DevCoreEnvSchema.shape.DEV_CORE_HOST,
  DEV_CORE_FIXTURE: z.string().min(1).optional().describe("dev-core's data file; unset means the bundled demo fixture"),
  PRINT_DEMO_TOKENS: flag.default(true).describe('print demo tokens at start (embedded dev-core only)'),
});

export interface AllInOneConfig {
  /** `pretty`: human-readable lines, for a terminal. */
  log: { level: string; pretty: boolean };
  http: HttpServerConfig;
  database: DatabaseConfig;
  redis: RedisConfig;
  /** `url` unset: the process starts its own dev-core. */
  core: { url: string | undefined; serviceToken: string; timeoutMs: number; authorizationsPerPrincipal: number };
  cursor: CursorConfig;
  api: ApiServiceConfig;
  gateway: GatewayServiceConfig;
  /** How the notifier delivers webhooks; loopback is allowed unless `WEBHOOK_ALLOW_LOOPBACK=false` (a development service). */
  webhookDelivery: WebhookDeliveryConfig;
  /** `keysDir`: where dev-core keeps its signing keys, so tokens outlive a restart. */
  devCore: { port: number; host: string; fixturePath: string | undefined; keysDir: string };
  printDemoTokens: boolean;
  /** Off unless an OTLP endpoint is set. @defaultValue off */
  tracing?: TracingConfig;
}

/**
 * Parses the environment; a bad value fails the start naming it. `terminal`: stdout is a terminal,
 * so logs are written for a person rather than a collector.
 */
export function loadAllInOneConfig(env: NodeJS.ProcessEnv, options: { terminal?: boolean } = {}): AllInOneConfig {
  return loadConfig(AllInOneEnvSchema, env, (e) => ({
    log: { ...logConfigOf(e), pretty: options.terminal === true },
    http: httpConfigOf(e),
    database: databaseConfigOf(e),
    redis: redisConfigOf(e),
    core: { url: e.CORE_URL, serviceToken: e.CORE_SERVICE_TOKEN, timeoutMs: e.CORE_TIMEOUT_MS, authorizationsPerPrincipal: e.CORE_AUTHORIZATIONS_PER_PRINCIPAL },
    cursor: cursorConfigOf(e),
    api: apiServiceConfigOf(e, true),
    gateway: gatewayServiceConfigOf(e),
    webhookDelivery: webhookDeliveryConfigOf({ ...e, CHAT_DEVELOPMENT_MODE: true }),
    devCore: { port: e.DEV_CORE_PORT, host: e.DEV_CORE_HOST, fixturePath: e.DEV_CORE_FIXTURE, keysDir: join(e.DATA_DIR, DEV_CORE_KEYS_FOLDER) },
    printDemoTokens: e.PRINT_DEMO_TOKENS,
    tracing: tracingConfigOf(e, 'chat-all-in-one'),
  }));
}
