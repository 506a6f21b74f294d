import { databaseFields, loadConfig, positiveInt, type DatabaseConfig } from '@chat/service-config';
import { z } from 'zod';
import type { MigrateOptions } from './migrate.ts';

/** The migration CLI's environment: where the database is, and how long a statement may wait for a lock. */
export const MigrateEnvSchema = z.object({
  DATABASE_URL: databaseFields.DATABASE_URL,
  DATA_DIR: databaseFields.DATA_DIR,
  DATABASE_POOLER: databaseFields.DATABASE_POOLER,
  MIGRATION_LOCK_TIMEOUT_MS: positiveInt
    .max(600_000)
    .default(5000)
    .describe("`lock_timeout` of every migration statement: a statement that cannot get its table's lock in this time gives up instead of queueing every query of that table behind it, and its migration is tried again"),
  MIGRATION_LOCK_RETRIES: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .default(10)
    .describe('further tries of a migration whose statement timed out on a lock, the waits doubling from 1 s; then the run fails, naming the migration'),
});

/** The migration CLI's configuration. */
export interface MigrateConfig {
  database: Pick<DatabaseConfig, 'url' | 'dataDir' | 'pooler'>;
  migration: Required<Pick<MigrateOptions, 'lockTimeoutMs' | 'lockRetries'>>;
}

/** Parses the environment; a bad value fails the run with a message naming it. */
export function loadMigrateConfig(env: NodeJS.ProcessEnv): MigrateConfig {
  return loadConfig(MigrateEnvSchema, env, (e) => ({
    database: { url: e.DATABASE_URL, dataDir: e.DATA_DIR, pooler: e.DATABASE_POOLER },
    migration: { lockTimeoutMs: e.MIGRATION_LOCK_TIMEOUT_MS, lockRetries: e.MIGRATION_LOCK_RETRIES },
  }));
}
