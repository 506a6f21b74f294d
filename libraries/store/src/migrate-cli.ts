/**
 * Applies pending migrations and changed function files, and exits: the Kubernetes migration Job's
 * command, run ahead of a rollout with the DDL role. Services migrate at start only where
 * MIGRATE_ON_START is true (development, the all-in-one).
 */
import { loadConfigOrExit } from '@chat/service-config';
import { migrate } from './migrate.ts';
import { databaseTargetFor, openDatabase } from './database.ts';
import { loadMigrateConfig } from './migrate-config.ts';

const config = loadConfigOrExit(() => loadMigrateConfig(process.env));
const database = await openDatabase(databaseTargetFor({ databaseUrl: config.database.url, dataDir: config.database.dataDir, pooler: config.database.pooler }));
try {
  const { migrations, functions } = await migrate(database, undefined, {
    ...config.migration,
    onLockTimeout: (unit, attempt, waitMs) => process.stderr.write(`${unit}: lock timeout (try ${attempt}), trying again in ${waitMs} ms\n`),
  });
  const applied = [...migrations, ...functions.map((name) => `function ${name}`)];
  process.stdout.write(applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'schema and functions up to date\n');
} finally {
  await database.close();
}
