import { databaseFields, loadConfig, type DatabaseConfig } from '@chat/service-config';
import { z } from 'zod';

/** The migration CLI's environment: where the database is. */
export const MigrateEnvSchema = z.object({
  DATABASE_URL: databaseFields.DATABASE_URL,
  DATA_DIR: databaseFields.DATA_DIR,
  DATABASE_POOLER: databaseFields.DATABASE_POOLER,
});

/** The migration CLI's configuration. */
export interface MigrateConfig {
  database: Pick<DatabaseConfig, 'url' | 'dataDir' | 'pooler'>;
}

/** Parses the environment; a bad value fails the run with a message naming it. */
export function loadMigrateConfig(env: NodeJS.ProcessEnv): MigrateConfig {
  return loadConfig(MigrateEnvSchema, env, (e) => ({ database: { url: e.DATABASE_URL, dataDir: e.DATA_DIR, pooler: e.DATABASE_POOLER } }));
}
