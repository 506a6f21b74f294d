import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, type Database } from '../src/index.ts';

/** PostgreSQL used by integration tests; CI and developer machines run one locally. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestTarget {
  name: string;
  open(): Promise<{ database: Database; cleanup(): Promise<void> }>;
}

/** The two databases every store test runs on: real PostgreSQL and embedded PGlite in a temp folder. */
export const testTargets: TestTarget[] = [
  {
    name: 'postgres',
    async open() {
      const database = await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 20 });
      await migrate(database);
      return { database, cleanup: () => database.close() };
    },
  },
  {
    name: 'pglite',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'chat-pglite-'));
      const database = await openDatabase({ kind: 'pglite', dataDir: dir });
      await migrate(database);
      return {
        database,
        async cleanup() {
          await database.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
