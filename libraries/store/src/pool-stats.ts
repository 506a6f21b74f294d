import type pg from 'pg';

/**
 * A PostgreSQL connection pool's occupancy at one moment, for the pool-saturation metrics. The
 * embedded database (PGlite) has no pool: it runs one statement at a time on its only connection.
 */
export interface PoolStats {
  /** The pool's size (`DATABASE_POOL_SIZE`): connections it may open. */
  max: number;
  /** Connections running a statement or a transaction. */
  inUse: number;
  /** Connections open and free, including those the hot path keeps between its statements. */
  idle: number;
  /** Callers waiting for a connection because every one is in use. */
  waiting: number;
}

/**
 * The occupancy of `pool`. The clients the hot path holds between its statements (held-clients.ts)
 * are checked out as far as the pool knows, but free: they count as idle.
 */
export function pgPoolStats(pool: pg.Pool, max: number, heldIdle: number): PoolStats {
  const idle = pool.idleCount + heldIdle;
  return { max, inUse: Math.max(0, pool.totalCount - idle), idle, waiting: pool.waitingCount };
}
