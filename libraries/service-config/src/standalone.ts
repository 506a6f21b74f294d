/**
 * The part of a standalone service's configuration that the API and the gateway share: where it
 * listens, its admin server, and the process resources under it. Built in one place, with the start-up safety
 * check, so every standalone service refuses the same unsafe settings the same way.
 */
import type { z } from 'zod';
import type { sharedEnvFields } from './fields.ts';
import {
  adminHostOf,
  coreConfigOf,
  cursorConfigOf,
  databaseConfigOf,
  developmentModeOf,
  httpConfigOf,
  logConfigOf,
  redisConfigOf,
  type CoreConfig,
  type CursorConfig,
  type DatabaseConfig,
  type HttpServerConfig,
  type RedisConfig,
} from './nested.ts';
import { assertSafeOutsideDevelopment } from './production-safety.ts';

export interface StandaloneServiceConfig {
  developmentMode: boolean;
  log: { level: string };
  http: HttpServerConfig;
  admin: { host: string; port: number };
  database: DatabaseConfig;
  redis: RedisConfig;
  core: CoreConfig;
  cursor: CursorConfig;
}

/**
 * The shared part of a standalone service's configuration. CORE_URL is required; outside development
 * mode the public development token and a plain-http core off loopback are refused.
 */
export function standaloneServiceConfigOf(e: z.output<z.ZodObject<typeof sharedEnvFields>>, adminPort: number): StandaloneServiceConfig {
  const config: StandaloneServiceConfig = {
    developmentMode: developmentModeOf(e),
    log: logConfigOf(e),
    http: httpConfigOf(e),
    admin: { host: adminHostOf(e), port: adminPort },
    database: databaseConfigOf(e),
    redis: redisConfigOf(e),
    core: coreConfigOf(e),
    cursor: cursorConfigOf(e),
  };
  assertSafeOutsideDevelopment({ developmentMode: config.developmentMode, coreUrl: config.core.url, serviceToken: config.core.serviceToken });
  return config;
}
