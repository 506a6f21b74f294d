/**
 * Turns the flat, parsed environment into the nested shapes the services and the composition root
 * take, so no code past start-up knows an environment variable's name.
 */
import type { z } from 'zod';
import { ConfigError } from './parse-env.ts';
import type { adminFields, coreFields, cursorFields, databaseFields, developmentFields, httpFields, logFields, redisFields } from './fields.ts';

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
}

/** `none`: a direct (or session-pooled) connection; `transaction`: a transaction-pooling proxy. */
export type DatabasePooler = 'none' | 'transaction';

export interface RedisConfig {
  /** undefined means the in-process backbone, rate windows and leases. */
  url: string | undefined;
  keyPrefix: string;
}

export interface CoreConfig {
  url: string;
  serviceToken: string;
  timeoutMs: number;
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
});

export const redisConfigOf = (e: Parsed<typeof redisFields>): RedisConfig => ({ url: e.REDIS_URL, keyPrefix: e.REDIS_KEY_PREFIX });

/** Core's settings; `url` is the configured one, or `fallbackUrl` (the all-in-one's own dev-core) when unset. */
export function coreConfigOf(e: Parsed<typeof coreFields>, fallbackUrl?: string): CoreConfig {
  const url = e.CORE_URL ?? fallbackUrl;
  if (url === undefined) throw new ConfigError('Invalid configuration: CORE_URL: required');
  return { url, serviceToken: e.CORE_SERVICE_TOKEN, timeoutMs: e.CORE_TIMEOUT_MS };
}

export const cursorConfigOf = (e: Parsed<typeof cursorFields>): CursorConfig => ({ secret: e.CURSOR_SECRET, previousSecrets: e.CURSOR_SECRETS_PREVIOUS });

export const logConfigOf = (e: Parsed<typeof logFields>) => ({ level: e.LOG_LEVEL });

export const developmentModeOf = (e: Parsed<typeof developmentFields>): boolean => e.CHAT_DEVELOPMENT_MODE;
