import pg from 'pg';
import { HeldClients } from './held-clients.ts';
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

/** How statements reach the server. */
export interface PgSqlClientOptions {
  /**
   * Whether statements with a `name` are kept prepared per connection. Behind a transaction pooler
   * a connection's next statement may run on another server connection, which never saw the
   * prepare, or saw another client's under the same name; there every statement runs unnamed
   * (parsed and planned each time, as the unnamed ones always are).
   * @defaultValue true
   */
  namedStatements?: boolean;
  /**
   * Pool clients kept checked out for `query` between statements (held-clients.ts), out of the
   * pool's reach for everything else.
   * @defaultValue 0
   */
  heldClients?: number;
}

/** The PostgreSQL client; `close` hands its held clients back, before the pool is ended. */
export interface PgSqlClient extends SqlClient {
  /** Pool clients held between statements and free at this moment (see held-clients.ts). */
  readonly heldIdle: number;
  close(): void;
}

export function pgSqlClient(pool: pg.Pool, options: PgSqlClientOptions = {}): PgSqlClient {
  const named = options.namedStatements ?? true;
  const held = new HeldClients(pool, options.heldClients ?? 0);
  const on = (client: pg.PoolClient): SqlQueryable => ({
    query: (statement, params) => run(client, named ? statement.name : undefined, statement.text, params),
  });
  return {
    async query<R>(statement: SqlStatement, params: unknown[]) {
      const client = await held.acquire();
      let rows: R[];
      try {
        rows = await run<R>(client, named ? statement.name : undefined, statement.text, params);
      } catch (err) {
        held.release(client, err as Error);
        throw err;
      }
      held.release(client);
      return rows;
    },
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(on(client));
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
    get heldIdle() {
      return held.idleCount;
    },
    close: () => held.close(),
  };
}

/**
 * Runs one statement. Text and values go to pg as arguments and the name is set on the query: given
 * a config object, pg copies it property by property (through descriptors) on every call.
 */
function run<R>(client: pg.PoolClient, name: string | undefined, text: string, params: unknown[]): Promise<R[]> {
  return new Promise<R[]>((resolve, reject) => {
    const query = new pg.Query<R & pg.QueryResultRow>(text, params, (err, result) => (err ? reject(err) : resolve(result.rows)));
    if (name !== undefined) (query as { name?: string }).name = name;
    client.query(query);
  });
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
