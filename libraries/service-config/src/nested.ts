/**
 * Turns the flat, parsed environment into the nested shapes the services and the composition root
 * take, so no code past start-up knows an environment variable's name.
 */
import type { z } from 'zod';
import { ConfigError } from './parse-env.ts';
import type { adminFields, coreFields, cursorFields, databaseFields, developmentFields, httpFields, logFields, redisFields, webhookAddressFields, webhookDeliveryFields } from './fields.ts';

type Parsed<F extends z.core.$ZodLooseShape> = z.output<z.ZodObject<F>>;

/** How the public HTTP server listens and bounds slow or idle clients. */
export interface HttpServerConfig {
  port: number;
  host: string;
  limits: HttpServerLimits;
}

/** Timeouts and the connection cap every HTTP server sets. */
export interface HttpServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export interface DatabaseConfig {
  /** PostgreSQL URL; undefined means PGlite in `dataDir`. */
  url: string | undefined;
  dataDir: string;
  poolSize: number;
  /**
   * What sits between the process and PostgreSQL: `transaction` is a transaction-pooling proxy,
   * which hands each transaction whatever server connection is free, so nothing may live in a session.
   * @defaultValue 'none'
   */
  pooler?: DatabasePooler;
  /**
   * Whether the process applies pending migrations when it opens the database; `false` where a
   * migration Job with its own DDL role owns the schema.
   * @defaultValue true
   */
  migrateOnStart?: boolean;
}

/** `none`: a direct (or session-pooled) connection; `transaction`: a transaction-pooling proxy. */
export type DatabasePooler = 'none' | 'transaction';

/** How Redis is deployed: one node, a Cluster, or a primary followed through Sentinel. */
type RedisMode = 'single' | 'cluster' | 'sentinel';

export interface RedisConfig {
  /** undefined means the in-process backbone and stream leases (one process only). */
  url: string | undefined;
  keyPrefix: string;
  /** @defaultValue 'single' */
  mode?: RedisMode;
  /** Further Cluster nodes (`cluster`) or sentinels (`sentinel`) besides the one `url` names, as `host:port`. */
  seedNodes?: string[];
  /** The primary group Sentinel watches. @defaultValue 'mymaster' */
  sentinelName?: string;
}

export interface CoreConfig {
  url: string;
  serviceToken: string;
  timeoutMs: number;
  /** Authorizations one principal may have pending with core at once. @defaultValue 64 */
  authorizationsPerPrincipal?: number;
}

export interface CursorConfig {
  secret: string | undefined;
  previousSecrets: string[];
}

export const httpConfigOf = (e: Parsed<typeof httpFields>): HttpServerConfig => ({
  port: e.PORT,
  host: e.HOST,
  limits: {
    headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: e.HTTP_MAX_CONNECTIONS,
  },
});

export const adminHostOf = (e: Parsed<typeof adminFields>): string => e.ADMIN_HOST;

export const databaseConfigOf = (e: Parsed<typeof databaseFields>): DatabaseConfig => ({
  url: e.DATABASE_URL,
  dataDir: e.DATA_DIR,
  poolSize: e.DATABASE_POOL_SIZE,
  pooler: e.DATABASE_POOLER,
  migrateOnStart: e.MIGRATE_ON_START,
});

/** Redis's settings; a mode or seed nodes that do not fit together fail start, naming the variables. */
export function redisConfigOf(e: Parsed<typeof redisFields>): RedisConfig {
  const problem = redisProblem(e);
  if (problem) throw new ConfigError(`Invalid configuration: ${problem}`);
  return { url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX, mode: e.REDIS_MODE, seedNodes: e.REDIS_SEED_NODES, sentinelName: e.REDIS_SENTINEL_NAME };
}

function redisProblem(e: Parsed<typeof redisFields>): string | undefined {
  if (e.REDIS_URL === undefined) return e.REDIS_MODE !== 'single' || e.REDIS_SEED_NODES.length > 0 ? 'REDIS_URL: required with REDIS_MODE or REDIS_SEED_NODES' : undefined;
  if (e.REDIS_MODE === 'single' && e.REDIS_SEED_NODES.length > 0) return 'REDIS_SEED_NODES: only for REDIS_MODE=cluster or sentinel';
  const url = new URL(e.REDIS_URL);
  if (!/^rediss?:$/.test(url.protocol)) return 'REDIS_URL: must be a redis:// or rediss:// URL';
  // A Cluster has database 0 only.
  if (e.REDIS_MODE === 'cluster' && !['', '/', '/0'].includes(url.pathname)) return 'REDIS_URL: a Redis Cluster has no database but 0';
  return undefined;
}

/** Core's settings; `url` is the configured one, or `fallbackUrl` (the all-in-one's own dev-core) when unset. */
export function coreConfigOf(
  e: Omit<Parsed<typeof coreFields>, 'CORE_AUTHORIZATIONS_PER_PRINCIPAL'> & Partial<Pick<Parsed<typeof coreFields>, 'CORE_AUTHORIZATIONS_PER_PRINCIPAL'>>,
  fallbackUrl?: string,
): CoreConfig {
  const url = e.CORE_URL ?? fallbackUrl;
  if (url === undefined) throw new ConfigError('Invalid configuration: CORE_URL: required');
  return {
    url,
    serviceToken: e.CORE_SERVICE_TOKEN,
    timeoutMs: e.CORE_TIMEOUT_MS,
    // Services that never authorize a request (the notifier) do not read the setting.
    ...(e.CORE_AUTHORIZATIONS_PER_PRINCIPAL === undefined ? {} : { authorizationsPerPrincipal: e.CORE_AUTHORIZATIONS_PER_PRINCIPAL }),
  };
}

export const cursorConfigOf = (e: Parsed<typeof cursorFields>): CursorConfig => ({ secret: e.CURSOR_SECRET, previousSecrets: e.CURSOR_SECRETS_PREVIOUS });

export const logConfigOf = (e: Parsed<typeof logFields>) => ({ level: e.LOG_LEVEL });

export const developmentModeOf = (e: Parsed<typeof developmentFields>): boolean => e.CHAT_DEVELOPMENT_MODE;

/** Where webhooks may be sent, and how many one principal may register. */
export interface WebhookAddressConfig {
  allowLoopback: boolean;
  allowedCidrs: string[];
  perPrincipal: number;
}

export const webhookAddressConfigOf = (e: Parsed<typeof webhookAddressFields> & Parsed<typeof developmentFields>): WebhookAddressConfig => ({
  allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK ?? e.CHAT_DEVELOPMENT_MODE,
  allowedCidrs: e.WEBHOOK_ALLOWED_CIDRS,
  perPrincipal: e.WEBHOOKS_PER_PRINCIPAL,
});

/** How webhooks are delivered: where to, how long a receiver is waited for, how failures are retried. */
export interface WebhookDeliveryConfig {
  addresses: { allowLoopback: boolean; allowedCidrs: string[] };
  timeoutMs: number;
  concurrency: number;
  retry: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
}

export const webhookDeliveryConfigOf = (
  e: Parsed<typeof webhookDeliveryFields> & Omit<Parsed<typeof webhookAddressFields>, 'WEBHOOKS_PER_PRINCIPAL'> & Parsed<typeof developmentFields>,
): WebhookDeliveryConfig => ({
  addresses: { allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK ?? e.CHAT_DEVELOPMENT_MODE, allowedCidrs: e.WEBHOOK_ALLOWED_CIDRS },
  timeoutMs: e.WEBHOOK_TIMEOUT_MS,
  concurrency: e.WEBHOOK_CONCURRENCY,
  retry: { maxAttempts: e.WEBHOOK_MAX_ATTEMPTS, baseDelayMs: e.WEBHOOK_RETRY_BASE_MS, maxDelayMs: e.WEBHOOK_RETRY_MAX_MS },
});
