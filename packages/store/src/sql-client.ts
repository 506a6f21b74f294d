import type pg from 'pg';
import type { PgliteHandle, PgliteQueryable } from './pglite-thread.ts';

/**
 * A statement the hot paths run by hand: fixed text and positional parameters. With a `name`,
 * PostgreSQL keeps it prepared per connection, and after a few runs it keeps one generic plan for
 * good, made with the statistics of that moment. So only statements whose plan cannot go wrong get
 * a name; a statement that picks between indexes or join orders by table size goes without, and is
 * planned for its parameters on every run.
 */
export interface SqlStatement {
  name?: string;
  text: string;
}

export interface SqlQueryable {
  query<R>(statement: SqlStatement, params: unknown[]): Promise<R[]>;
}

/**
 * Raw SQL for the append path, where drizzle's query building and result mapping cost about a tenth
 * of an API process's CPU. Everything else goes through drizzle; both see the same database.
 */
export interface SqlClient extends SqlQueryable {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T>;
}

export function pgSqlClient(pool: pg.Pool): SqlClient {
  const over = (queryable: pg.Pool | pg.PoolClient): SqlQueryable => ({
    async query<R>(statement: SqlStatement, params: unknown[]) {
      const result = await queryable.query(
        statement.name === undefined ? { text: statement.text, values: params } : { name: statement.name, text: statement.text, values: params },
      );
      return result.rows as R[];
    },
  });
  return {
    ...over(pool),
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(over(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackErr: Error) => (broken = rollbackErr));
        throw err;
      } finally {
        // A connection that cannot even roll back is not handed to the next caller.
        client.release(broken);
      }
    },
  };
}

export function pgliteSqlClient(client: PgliteHandle): SqlClient {
  const over = (queryable: PgliteQueryable): SqlQueryable => ({
    async query<R>(statement: SqlStatement, params: unknown[]) {
      const result = await queryable.query<R>(statement.text, params);
      return result.rows;
    },
  });
  return {
    ...over(client),
    transaction: (work) => client.transaction((tx) => work(over(tx))),
  };
}
