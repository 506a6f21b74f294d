/**
 * One handle over either PostgreSQL (`pg`, by URL) or embedded PGlite (data in a folder). The
 * repositories only see the drizzle database, so the same code runs on both.
 */
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { DatabasePooler } from '@chat/service-config';
import { schema } from './schema.ts';
import { resolve } from 'node:path';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';
import { startPgliteThread, type PgliteHandle, type PgliteStartOptions } from './pglite-thread.ts';
import { pgliteSqlClient, pgSqlClient, type SqlClient } from './sql-client.ts';
import { pgPoolStats, type PoolStats } from './pool-stats.ts';

export type ChatDb = PgDatabase<PgQueryResultHKT, typeof schema>;

export type DatabaseTarget =
  | {
      kind: 'postgres';
      url: string;
      poolSize?: number;
      statementTimeoutMs?: number;
      connectTimeoutMs?: number;
      /**
       * `transaction`: `url` is a transaction-pooling proxy (PgBouncer `pool_mode = transaction`),
       * which gives each transaction whatever server connection is free. Nothing may then rely on a
       * session: statements run unnamed, and the statement timeout is left to the server's settings
       * (a startup parameter is refused by the proxy, and would bind one server connection only).
       * @defaultValue 'none'
       */
      pooler?: DatabasePooler;
    }
  | { kind: 'pglite'; dataDir?: string };

/** A statement without parameters on a held session, and its rows. */
export type SessionQuery = (text: string) => Promise<Array<Record<string, unknown>>>;

export interface Database {
  readonly kind: DatabaseTarget['kind'];
  readonly db: ChatDb;
  /** Hand-written statements for the hot paths (see sql-client.ts). */
  readonly sql: SqlClient;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `work` on one connection held for it alone, for statements that share a session outside
   * a transaction (migrations that PostgreSQL refuses inside one). Its session settings are reset
   * before the connection serves anything else. Refused behind a transaction pooler, which has no
   * session to hold.
   */
  session<T>(work: (query: SessionQuery) => Promise<T>): Promise<T>;
  /** A cheap round trip, for readiness probes. */
  ping(): Promise<void>;
  /** The connection pool's occupancy now; undefined for the embedded database, which has no pool. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  onPgliteTemplateUnusable?: PgliteStartOptions['onTemplateUnusable'];
  /**
   * The embedded database folder's lock, taken by the caller before it started anything else that
   * keeps files in the folder; the caller then releases it after `close()`.
   * @defaultValue taken here, before PGlite opens the folder, and released by `close()`
   */
  dataDirLock?: DataDirLock;
}

/**
 * Opens the database. For PostgreSQL the pool fails fast when the server is gone (connect timeout)
 * and bounds every statement, so an outage turns into a quick 503 rather than a hung request.
 * PGlite in a folder opens only while this process owns the folder (data-dir-lock.ts).
 */
export async function openDatabase(target: DatabaseTarget, options: OpenDatabaseOptions = {}): Promise<Database> {
  if (target.kind === 'postgres') return openPostgres(target);
  const { onPgliteTemplateUnusable, dataDirLock } = options;
  const dir = target.dataDir;
  // PGlite also takes URLs (memory://), which no other process can open.
  const inFolder = dir !== undefined && !dir.includes('://');
  if (inFolder && dataDirLock && dataDirLock.dir !== resolve(dir)) throw new Error(`the data folder lock given is for ${dataDirLock.dir}, not ${resolve(dir)}`);
  const ownLock = inFolder && !dataDirLock ? await lockDataDir(dir) : undefined;
  try {
    return pgliteDatabase(await startPgliteThread(dir, onPgliteTemplateUnusable ? { onTemplateUnusable: onPgliteTemplateUnusable } : {}), ownLock);
  } catch (err) {
    await ownLock?.release();
    throw err;
  }
}

function openPostgres(target: Extract<DatabaseTarget, { kind: 'postgres' }>): Database {
  const pooled = target.pooler === 'transaction';
  const poolSize = target.poolSize ?? 10;
  const pool = new pg.Pool({
    connectionString: target.url,
    max: poolSize,
    connectionTimeoutMillis: target.connectTimeoutMs ?? 3000,
    // A session setting sent at connect: PgBouncer refuses the startup parameter, and through any
    // transaction pooler it would only reach the one server connection behind the first transaction.
    ...(pooled ? {} : { statement_timeout: target.statementTimeoutMs ?? 10_000 }),
    idleTimeoutMillis: 30_000,
  });
  // A connection lost under a client (server restart, network reset) must not crash the process:
  // the query in flight fails (and becomes STORE_UNAVAILABLE), and the pool discards the client.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzlePg(pool, { schema }) as unknown as ChatDb;
  // The hot paths' statements keep up to two clients between statements (one per append lane and
  // key lookup lane at once), never more than a quarter of the pool: the rest serves everything else.
  const sql = pgSqlClient(pool, { namedStatements: !pooled, heldClients: Math.min(2, Math.floor(poolSize / 4)) });
  return {
    kind: 'postgres',
    db,
    sql,
    async exec(sql) {
      await pool.query(sql);
    },
    async session(work) {
      if (pooled) throw new Error('a migration outside a transaction needs a session: connect to PostgreSQL directly (DATABASE_POOLER=none), not through a transaction pooler');
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        return await work(async (text) => (await client.query(text)).rows);
      } catch (err) {
        broken = err as Error;
        throw err;
      } finally {
        await client.query('RESET ALL').catch((err: Error) => (broken ??= err));
        client.release(broken);
      }
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    poolStats: () => pgPoolStats(pool, poolSize, sql.heldIdle),
    async close() {
      sql.close();
      await pool.end();
    },
  };
}

/** `lock`: the folder's lock, released once the database is closed. */
export function pgliteDatabase(client: PgliteHandle, lock?: DataDirLock): Database {
  // drizzle's PGlite session only calls query() and transaction(), which the thread's handle has.
  const db = drizzlePglite({ client: client as unknown as PGlite, schema }) as unknown as ChatDb;
  return {
    kind: 'pglite',
    db,
    sql: pgliteSqlClient(client),
    async exec(sql) {
      await client.exec(sql);
    },
    async session(work) {
      // One connection already: the settings are reset before anything else runs on it.
      try {
        return await work(async (text) => (await client.query<Record<string, unknown>>(text)).rows);
      } finally {
        await client.query('RESET ALL');
      }
    },
    async ping() {
      await client.query('SELECT 1');
    },
    poolStats: () => undefined,
    async close() {
      await client.close();
      await lock?.release();
    },
  };
}

/** PostgreSQL when a URL is configured, else embedded PGlite in `dataDir`: the rule every process follows. */
export function databaseTargetFor(config: {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  pooler?: DatabasePooler | undefined;
}): DatabaseTarget {
  return config.databaseUrl
    ? {
        kind: 'postgres',
        url: config.databaseUrl,
        ...(config.poolSize ? { poolSize: config.poolSize } : {}),
        ...(config.pooler ? { pooler: config.pooler } : {}),
      }
    : { kind: 'pglite', dataDir: config.dataDir };
}
