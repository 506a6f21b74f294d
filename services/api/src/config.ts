/**
 * The API's settings, read from the environment once at start and handed on as one typed, nested
 * object. Nothing else reads `process.env`.
 */
import {
  loadConfig,
  port,
  positiveInt,
  sharedEnvFields,
  standaloneServiceConfigOf,
  tracingConfigOf,
  tracingFields,
  webhookAddressConfigOf,
  webhookAddressFields,
  type StandaloneServiceConfig,
  type TracingConfig,
  type WebhookAddressConfig,
} from '@chat/service-config';
import type { AppendRateLimit } from '@chat/store';
import { z } from 'zod';

/** The API's own variables, spread into the standalone API's and the all-in-one's schemas. */
export const apiEnvFields = {
  API_BODY_LIMIT_BYTES: positiveInt.min(1024).max(10 * 1024 * 1024).default(262_144).describe('largest JSON request body in bytes (a 16 KiB body written as `\\u` escapes fits)'),
  API_SHUTDOWN_GRACE_MS: positiveInt.max(600_000).default(10_000).describe('how long SIGTERM waits for in-flight requests before closing connections'),
  APPEND_RATE_LIMIT: positiveInt.default(120).describe('appends allowed per window per rate key'),
  APPEND_RATE_WINDOW_SECONDS: positiveInt.max(86_400).default(60).describe('fixed window length; `Retry-After` counts whole seconds to its end'),
  APPEND_RATE_SCOPE: z.enum(['sender-room', 'sender']).default('sender-room').describe('rate key: each sender per room (`sender-room`), or each sender across rooms (`sender`)'),
  // Registration checks a webhook's URL against the same rule the notifier applies to every delivery.
  ...webhookAddressFields,
};

export const ApiEnvSchema = z.object({
  ...sharedEnvFields,
  ...apiEnvFields,
  ...tracingFields,
  API_ADMIN_PORT: port.default(9090).describe('admin server port (`/healthz`, `/readyz`, `/metrics`); 0 picks a free one'),
});

type ParsedApiFields = z.output<z.ZodObject<typeof apiEnvFields>>;


/** What the API itself (not the process resources under it) is tuned by. */
export interface ApiServiceConfig {
  bodyLimitBytes: number;
  shutdownGraceMs: number;
  /** The append rate window (counted in PostgreSQL, shared by every API instance). */
  rateLimit: AppendRateLimit;
  /** Where a registered webhook may point, and how many a principal may hold. */
  webhooks: WebhookAddressConfig;
}

/**
 * The API's own settings. `developmentMode` is the process's: unless `WEBHOOK_ALLOW_LOOPBACK` says
 * otherwise, a development service lets webhooks reach loopback.
 */
export const apiServiceConfigOf = (e: ParsedApiFields, developmentMode: boolean): ApiServiceConfig => ({
  bodyLimitBytes: e.API_BODY_LIMIT_BYTES,
  shutdownGraceMs: e.API_SHUTDOWN_GRACE_MS,
  rateLimit: {
    limit: e.APPEND_RATE_LIMIT,
    windowSeconds: e.APPEND_RATE_WINDOW_SECONDS,
    per: e.APPEND_RATE_SCOPE,
  },
  webhooks: webhookAddressConfigOf({ ...e, CHAT_DEVELOPMENT_MODE: developmentMode }),
});

/** The standalone API's configuration. */
export interface ApiConfig extends StandaloneServiceConfig {
  api: ApiServiceConfig;
  /** Off unless an OTLP endpoint is set. */
  tracing: TracingConfig;
}

/**
 * Parses the standalone API's environment. CORE_URL is required, and outside development mode the
 * public development token and plain-http core off loopback are refused.
 */
export function loadApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  return loadConfig(ApiEnvSchema, env, (e) => ({
    ...standaloneServiceConfigOf(e, e.API_ADMIN_PORT),
    api: apiServiceConfigOf(e, e.CHAT_DEVELOPMENT_MODE),
    tracing: tracingConfigOf(e, 'chat-api'),
  }));
}
