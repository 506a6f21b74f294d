import pg from 'pg';
import { ulid } from 'ulid';
import { testConfig } from './test-config.ts';

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh PostgreSQL database on the test server. A deployment's notifiers sweep every fanout row
 * of their database, so a cluster sharing the `test` database with another test's notifiers (which
 * ask another dev-core, where this run's repositories do not exist) would see its rows taken and
 * resolved to nobody. One database per cluster keeps deployments apart, as in production.
 */
export async function createScratchDatabase(label: string): Promise<ScratchDatabase> {
  const name = `${label}_${ulid().toLowerCase()}`;
  const admin = new pg.Client({ connectionString: testConfig.databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(testConfig.databaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: testConfig.databaseUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
