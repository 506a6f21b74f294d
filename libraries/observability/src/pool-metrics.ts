import { Gauge, type Registry } from 'prom-client';

/** A database connection pool's occupancy (the store's `PoolStats`). */
export interface PoolOccupancy {
  max: number;
  inUse: number;
  idle: number;
  waiting: number;
}

/**
 * The database pool's saturation, read from `stats` at scrape time (nothing is counted on the
 * request path): connections in use and idle, the pool's size, and callers waiting for a
 * connection. A process on the embedded database (no pool: `stats` answers undefined) leaves them
 * at 0. Saturation is `chat_db_pool_connections{state="in_use"}` /
 * `chat_db_pool_max_connections`; waiting callers above zero for long mean the pool is too small
 * for the load (latency first, then 503 `STORE_UNAVAILABLE` once the connect timeout passes).
 */
export function registerPoolMetrics(registry: Registry, stats: () => PoolOccupancy | undefined): void {
  new Gauge({
    name: 'chat_db_pool_connections',
    help: 'PostgreSQL pool connections by state: in_use (running a statement or transaction) and idle (open and free)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const now = stats();
      if (!now) return;
      this.set({ state: 'in_use' }, now.inUse);
      this.set({ state: 'idle' }, now.idle);
    },
  });
  new Gauge({
    name: 'chat_db_pool_max_connections',
    help: 'PostgreSQL pool size (DATABASE_POOL_SIZE): connections the process may open',
    registers: [registry],
    collect() {
      const now = stats();
      if (now) this.set(now.max);
    },
  });
  new Gauge({
    name: 'chat_db_pool_waiting_requests',
    help: 'Callers waiting for a PostgreSQL pool connection because every one is in use',
    registers: [registry],
    collect() {
      const now = stats();
      if (now) this.set(now.waiting);
    },
  });
}
