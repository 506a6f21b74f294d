/**
 * Applies pending migrations and changed function files, and exits: the Kubernetes migration Job's
 * command. Services also migrate at start (advisory-locked), so this is for running schema changes
 * ahead of a rollout.
 */
import { loadConfigOrExit } from '@chat/service-config';
import { migrate } from './migrate.ts';
import { databaseTargetFor, openDatabase } from './database.ts';
import { loadMigrateConfig } from './migrate-config.ts';

const config = loadConfigOrExit(() => loadMigrateConfig(process.env));
const database = await openDatabase(databaseTargetFor({ databaseUrl: config.database.url, dataDir: config.database.dataDir, pooler: config.database.pooler }));
try {
  const { migrations, functions } = await migrate(database);
  const applied = [...migrations, ...functions.map((name) => `function ${name}`)];
  process.stdout.write(applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'schema and functions up to date\n');
} finally {
  await database.close();
}
