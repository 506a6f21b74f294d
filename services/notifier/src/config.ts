/**
 * The standalone notifier's settings, read from the environment once at start and handed on as one
 * typed, nested object. Nothing else reads `process.env`.
 */
import {
  adminFields,
  adminHostOf,
  assertSafeOutsideDevelopment,
  coreConfigOf,
  coreFields,
  databaseFields,
  developmentFields,
  developmentModeOf,
  loadConfig,
  logConfigOf,
  logFields,
  port,
  positiveInt,
  redisConfigOf,
  redisFields,
  tracingConfigOf,
  tracingFields,
  webhookAddressFields,
  webhookDeliveryConfigOf,
  webhookDeliveryFields,
  type CoreConfig,
  type RedisConfig,
  type DatabasePooler,
  type TracingConfig,
} from '@chat/service-config';
import { z } from 'zod';
import type { NotifierSettingsInput } from './runtime.ts';

export const NotifierEnvSchema = z.object({
  ...developmentFields,
  DATABASE_URL: databaseFields.DATABASE_URL.unwrap().describe(databaseFields.DATABASE_URL.description!),
  DATABASE_POOL_SIZE: databaseFields.DATABASE_POOL_SIZE,
  DATABASE_POOLER: databaseFields.DATABASE_POOLER,
  MIGRATE_ON_START: databaseFields.MIGRATE_ON_START,
  REDIS_URL: redisFields.REDIS_URL.unwrap().describe(redisFields.REDIS_URL.description!),
  REDIS_MODE: redisFields.REDIS_MODE,
  REDIS_SEED_NODES: redisFields.REDIS_SEED_NODES,
  REDIS_SENTINEL_NAME: redisFields.REDIS_SENTINEL_NAME,
  REDIS_KEY_PREFIX: redisFields.REDIS_KEY_PREFIX,
  CORE_URL: coreFields.CORE_URL.unwrap().describe(coreFields.CORE_URL.description!),
  CORE_SERVICE_TOKEN: coreFields.CORE_SERVICE_TOKEN,
  CORE_TIMEOUT_MS: coreFields.CORE_TIMEOUT_MS,
  ...adminFields,
  NOTIFIER_ADMIN_PORT: port.default(9092).describe('admin server port (`/healthz`, `/readyz`, `/metrics`); 0 picks a free one'),
  NOTIFIER_GROUP: z.string().min(1).max(64).default('notifier').describe('consumer group on the `mentions` channel'),
  NOTIFIER_CONSUMER_NAME: z.string().min(1).max(128).optional().describe("this member's name in the group; unset means host name, pid and a random suffix"),
  NOTIFIER_BATCH_SIZE: positiveInt.max(10_000).default(64).describe('backbone entries read per partition per round'),
  NOTIFIER_CLAIM_IDLE_MS: positiveInt.default(30_000).describe("a crashed member's pending entries are taken over after this long"),
  NOTIFIER_MAX_DELIVERIES: positiveInt.max(1000).default(5).describe('deliveries of one backbone entry before it is dead-lettered'),
  NOTIFIER_SWEEP_INTERVAL_MS: positiveInt.default(1000).describe('pause between sweeps of the durable fanout table'),
  NOTIFIER_SWEEP_GRACE_MS: z.coerce.number().int().min(0).default(5000).describe('fanout rows younger than this are left to the backbone path'),
  NOTIFIER_SWEEP_BATCH_SIZE: positiveInt.max(10_000).default(100).describe('fanout rows claimed per sweep'),
  NOTIFIER_CONCURRENCY: positiveInt.max(256).default(8).describe('fanout runs at once, on the backbone path and in the sweeper each'),
  NOTIFIER_LEASE_MS: positiveInt.default(30_000).describe('how long a claim keeps other notifiers off a fanout row'),
  NOTIFIER_MAX_ATTEMPTS: positiveInt.max(1000).default(5).describe('failed attempts before a fanout row is dead-lettered (core or store outages do not count)'),
  NOTIFIER_RETRY_DELAY_MS: positiveInt.default(1000).describe('first retry delay after a failed attempt; doubles per attempt up to 60 s'),
  WEBHOOK_ALLOW_LOOPBACK: webhookAddressFields.WEBHOOK_ALLOW_LOOPBACK,
  WEBHOOK_ALLOWED_CIDRS: webhookAddressFields.WEBHOOK_ALLOWED_CIDRS,
  ...webhookDeliveryFields,
  ...logFields,
  ...tracingFields,
});

/** The standalone notifier's configuration. */
export interface NotifierConfig {
  developmentMode: boolean;
  log: { level: string };
  admin: { host: string; port: number };
  database: { url: string; poolSize: number; pooler: DatabasePooler; migrateOnStart: boolean };
  redis: RedisConfig & { url: string };
  core: CoreConfig;
  notifier: NotifierSettingsInput;
  /** Off unless an OTLP endpoint is set. */
  tracing: TracingConfig;
}

/** Parses the environment; a bad value, or an unsafe one outside development mode, fails start naming it. */
export function loadNotifierConfig(env: NodeJS.ProcessEnv): NotifierConfig {
  return loadConfig(NotifierEnvSchema, env, (e) => {
    const config: NotifierConfig = {
      developmentMode: developmentModeOf(e),
      log: logConfigOf(e),
      admin: { host: adminHostOf(e), port: e.NOTIFIER_ADMIN_PORT },
      database: { url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, pooler: e.DATABASE_POOLER, migrateOnStart: e.MIGRATE_ON_START },
      redis: { ...redisConfigOf(e), url: e.REDIS_URL },
      core: coreConfigOf(e),
      notifier: {
        consumer: {
          group: e.NOTIFIER_GROUP,
          batchSize: e.NOTIFIER_BATCH_SIZE,
          concurrency: e.NOTIFIER_CONCURRENCY,
          claimIdleMs: e.NOTIFIER_CLAIM_IDLE_MS,
          maxDeliveries: e.NOTIFIER_MAX_DELIVERIES,
          ...(e.NOTIFIER_CONSUMER_NAME ? { consumer: e.NOTIFIER_CONSUMER_NAME } : {}),
        },
        sweeper: {
          intervalMs: e.NOTIFIER_SWEEP_INTERVAL_MS,
          graceMs: e.NOTIFIER_SWEEP_GRACE_MS,
          batchSize: e.NOTIFIER_SWEEP_BATCH_SIZE,
          concurrency: e.NOTIFIER_CONCURRENCY,
        },
        processor: { leaseMs: e.NOTIFIER_LEASE_MS, maxAttempts: e.NOTIFIER_MAX_ATTEMPTS, retryDelayMs: e.NOTIFIER_RETRY_DELAY_MS },
        webhooks: webhookDeliveryConfigOf(e),
      },
      tracing: tracingConfigOf(e, 'chat-notifier'),
    };
    assertSafeOutsideDevelopment({ developmentMode: config.developmentMode, coreUrl: config.core.url, serviceToken: config.core.serviceToken });
    return config;
  });
}
