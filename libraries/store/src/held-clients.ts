import type pg from 'pg';

/**
 * Pool clients kept checked out between the hand-written statements, so a statement usually runs on
 * a client already in hand: a checkout and release through the pool per statement (its queue, the
 * idle timer it sets and clears) is ~10–20 µs of the API's CPU per append when appends come one at
 * a time (tests/bench/append-store-cost.ts, with the submission without a config copy in
 * sql-client.ts).
 *
 * At most `keep` clients wait here between statements; any more go back to the pool when their
 * statement ends. A client whose statement failed goes back with the error, which makes the pool
 * close it and connect a new one later, as `pool.query` does. One whose connection ends or fails
 * while it waits here is never handed out again: it goes back to the pool, closed, when next picked.
 */
export class HeldClients {
  private readonly idle: pg.PoolClient[] = [];
  /** The listener each waiting client carries, which marks it lost. */
  private readonly watchers = new Map<pg.PoolClient, () => void>();
  private readonly lost = new WeakSet<pg.PoolClient>();
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly keep: number,
  ) {}

  /** Clients waiting here between statements: checked out of the pool, but free. */
  get idleCount(): number {
    return this.idle.length;
  }

  async acquire(): Promise<pg.PoolClient> {
    for (let client = this.idle.pop(); client !== undefined; client = this.idle.pop()) {
      if (!this.lost.has(client)) return client;
      this.toPool(client, new Error('the connection ended while the client was held'));
    }
    return this.pool.connect();
  }

  /** Takes a client back after its statement, `failure` set when the statement failed. */
  release(client: pg.PoolClient, failure?: Error): void {
    if (failure === undefined && !this.closed && this.idle.length < this.keep) {
      this.watch(client);
      this.idle.push(client);
    } else {
      this.toPool(client, failure);
    }
  }

  /** Hands every waiting client back to the pool, which can then end; later releases go there too. */
  close(): void {
    this.closed = true;
    for (const client of this.idle.splice(0)) this.toPool(client, this.lost.has(client) ? new Error('connection lost') : undefined);
  }

  private watch(client: pg.PoolClient): void {
    if (this.watchers.has(client)) return;
    const markLost = () => this.lost.add(client);
    client.on('error', markLost);
    client.on('end', markLost);
    this.watchers.set(client, markLost);
  }

  private toPool(client: pg.PoolClient, failure: Error | undefined): void {
    const markLost = this.watchers.get(client);
    if (markLost) {
      client.off('error', markLost);
      client.off('end', markLost);
      this.watchers.delete(client);
    }
    client.release(failure);
  }
}
