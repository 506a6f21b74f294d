import { connect as connectTcp, isIP } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { PooledConnection, type ConnectionOwner, type Exchange } from './pooled-connection.ts';

interface OriginPoolOptions {
  tls: boolean;
  hostname: string;
  port: number;
  maxConnections: number;
  idleTimeoutMs: number;
  /** Trusted certificate authorities for https, replacing Node's bundled ones. */
  ca: string | Buffer | undefined;
}

/**
 * The keep-alive connections to one origin: at most `maxConnections` open, idle ones reused
 * last-in-first-out (the warmest socket, and the others age out), exchanges beyond the cap queued
 * until a connection frees up.
 */
export class OriginPool implements ConnectionOwner {
  private readonly idle: PooledConnection[] = [];
  private readonly waiting: Exchange[] = [];
  private open = 0;
  private closed = false;

  constructor(private readonly options: OriginPoolOptions) {}

  /** Sends the exchange on an idle connection, a new one, or as soon as one frees up. */
  dispatch(exchange: Exchange): void {
    if (this.closed) {
      exchange.fail(new Error('core transport is closed'));
      return;
    }
    const idle = this.takeIdle();
    if (idle !== undefined) idle.run(exchange);
    else if (this.open < this.options.maxConnections) this.runOnNewConnection(exchange);
    else this.waiting.push(exchange);
  }

  /** Forgets a queued exchange (its time ran out before a connection freed up). */
  cancel(exchange: Exchange): void {
    const index = this.waiting.indexOf(exchange);
    if (index !== -1) this.waiting.splice(index, 1);
  }

  connectionReusable(connection: PooledConnection): void {
    if (this.closed) {
      connection.socket.destroy();
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) {
      connection.run(next);
      return;
    }
    connection.idleSince = Date.now();
    // An idle socket must not keep the process alive (the transport has no owner that closes it).
    connection.socket.unref();
    this.idle.push(connection);
  }

  connectionClosed(connection: PooledConnection, retry: Exchange | undefined): void {
    this.open--;
    const index = this.idle.lastIndexOf(connection);
    if (index !== -1) this.idle.splice(index, 1);
    const next = retry ?? this.waiting.shift();
    if (next === undefined) return;
    if (this.closed) next.fail(new Error('core transport is closed'));
    else this.runOnNewConnection(next);
  }

  /** Drops idle connections past their idle limit. */
  sweep(now: number): void {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const connection = this.idle[i]!;
      if (now - connection.idleSince >= connection.idleLimitMs) {
        this.idle.splice(i, 1);
        connection.socket.destroy();
      }
    }
  }

  /** Destroys idle connections and fails queued exchanges; exchanges on the wire finish or fail. */
  close(): void {
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.socket.destroy();
    for (const exchange of this.waiting.splice(0)) exchange.fail(new Error('core transport is closed'));
  }

  /** True when nothing is open or queued (the pool can be forgotten). */
  get empty(): boolean {
    return this.open === 0 && this.waiting.length === 0;
  }

  private takeIdle(): PooledConnection | undefined {
    const now = Date.now();
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) {
      // A socket the server just ended is destroyed but still listed until its 'close' event runs.
      if (now - connection.idleSince < connection.idleLimitMs && !connection.socket.destroyed) {
        connection.socket.ref();
        return connection;
      }
      connection.socket.destroy();
    }
    return undefined;
  }

  private runOnNewConnection(exchange: Exchange): void {
    const { tls, hostname, port, ca, idleTimeoutMs } = this.options;
    let socket;
    try {
      socket = tls
        ? connectTls({ host: hostname, port, ALPNProtocols: ['http/1.1'], ...(isIP(hostname) === 0 ? { servername: hostname } : {}), ...(ca === undefined ? {} : { ca }) })
        : connectTcp({ host: hostname, port });
    } catch (err) {
      // Arguments the socket refuses outright (port 0, say); errors of the connection itself come as events.
      exchange.fail(new Error(`core connection failed: ${(err as Error).message}`, { cause: err }));
      return;
    }
    this.open++;
    new PooledConnection(socket, this, idleTimeoutMs).run(exchange);
  }
}
