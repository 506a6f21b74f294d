import pg from 'pg';
import { openDatabase } from '../../libraries/store/src/index.ts';

/**
 * A deployment's store, as a bulk seed reaches it: PostgreSQL by URL (the services may keep running),
 * or the embedded PGlite folder of an all-in-one, which only a process that owns the folder may open
 * (libraries/store/src/data-dir-lock.ts), so the all-in-one is stopped while it is seeded.
 */
export type StoreLocation = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };

/** One connection of a seed: its session settings and temporary tables last until `close()`. */
export interface SeedSession {
  readonly kind: StoreLocation['kind'];
  /** One statement with positional parameters; its rows. */
  query<R>(text: string, params?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

/**
 * Connects a seed to `location`. PGlite is opened through the store's own code, which takes the
 * folder's lock for the seed's duration (a running all-in-one on the folder refuses it) and starts the
 * embedded database on its thread as the all-in-one does.
 */
export async function openSeedSession(location: StoreLocation): Promise<SeedSession> {
  if (location.kind === 'postgres') {
    const client = new pg.Client({ connectionString: location.url });
    await client.connect();
    return {
      kind: 'postgres',
      query: async <R>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as R[],
      close: () => client.end(),
    };
  }
  const database = await openDatabase({ kind: 'pglite', dataDir: location.dataDir });
  return {
    kind: 'pglite',
    query: <R>(text: string, params: unknown[] = []) => database.sql.query<R>({ text }, params),
    close: () => database.close(),
  };
}
