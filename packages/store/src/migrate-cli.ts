/**
 * Applies pending migrations and exits: the Kubernetes migration Job's command. Services also
 * migrate at start (advisory-locked), so this is for running schema changes ahead of a rollout.
 */
import { z } from 'zod';
import { migrate } from './migrate.ts';
import { databaseTargetFor, openDatabase } from './database.ts';

const env = z
  .object({ DATABASE_URL: z.string().url().optional(), DATA_DIR: z.string().min(1).default('./data') })
  .safeParse(process.env);
if (!env.success) {
  process.stderr.write(`Invalid configuration: ${env.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}\n`);
  process.exit(2);
}
const database = await openDatabase(databaseTargetFor({ databaseUrl: env.data.DATABASE_URL, dataDir: env.data.DATA_DIR }));
try {
  const applied = await migrate(database);
  process.stdout.write(applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'schema up to date\n');
} finally {
  await database.close();
}
