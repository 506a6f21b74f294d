import type { Socket } from 'node:net';
import type { ParsedResponse, ResponseParser } from './response-parser.ts';

/** One call as a connection carries it: the bytes to write, the parser of its answer, whom to tell. */
export interface Exchange {
  readonly request: Buffer;
  readonly parser: ResponseParser;
  /** The connection carrying the exchange, while one does (a timeout destroys it). */
  connection: PooledConnection | undefined;
  /** Set once the exchange has been sent again after a stale keep-alive connection. */
  retried: boolean;
  succeed(response: ParsedResponse): void;
  fail(error: Error): void;
}

/** The pool a connection belongs to, told when it becomes free or goes away. */
export interface ConnectionOwner {
  /** The answer is complete and the connection can carry another request. */
  connectionReusable(connection: PooledConnection): void;
  /** The socket closed; `retry` is an exchange to send again on a fresh connection. */
  connectionClosed(connection: PooledConnection, retry: Exchange | undefined): void;
}

/**
 * Servers close idle connections at their advertised keep-alive timeout; a request written just before
 * would meet a closed socket, so an advertised timeout is honoured this much early.
 */
const KEEP_ALIVE_MARGIN_MS = 1000;

/**
 * A keep-alive socket to one origin carrying one exchange at a time. Its listeners are attached once
 * for its life, so a socket error between calls is handled (the socket is dropped), never unhandled.
 */
export class PooledConnection {
  /** When it went idle (Date.now()), for the pool's idle timeout. */
  idleSince = 0;
  /** How long it may stay idle: the pool's timeout, or less when the server advertises less. */
  idleLimitMs: number;
  private exchange: Exchange | undefined;
  /** Answers completed on this socket; a socket that served one is a reused keep-alive socket. */
  private served = 0;
  /** Some byte of the current exchange's answer arrived (after that, no retry). */
  private answered = false;
  private error: Error | undefined;

  constructor(
    readonly socket: Socket,
    private readonly owner: ConnectionOwner,
    idleTimeoutMs: number,
  ) {
    this.idleLimitMs = idleTimeoutMs;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err: Error) => {
      this.error ??= err;
    });
    // A server's FIN ends our side too (allowHalfOpen is off), so 'close' follows every ending.
    socket.on('close', () => this.onClose());
  }

  /** Writes the exchange's request; the answer, a close or an error settles it. */
  run(exchange: Exchange): void {
    this.exchange = exchange;
    this.answered = false;
    exchange.connection = this;
    this.socket.write(exchange.request);
  }

  /** Drops the connection and whatever it carries (the exchange has been settled elsewhere). */
  abandon(): void {
    this.detach();
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    const exchange = this.exchange;
    if (exchange === undefined) {
      // Nothing was asked: a server speaking out of turn cannot be trusted with the next request.
      this.socket.destroy();
      return;
    }
    this.answered = true;
    let response: ParsedResponse | undefined;
    try {
      response = exchange.parser.push(chunk);
    } catch (err) {
      this.abandon();
      exchange.fail(err as Error);
      return;
    }
    if (response === undefined) return;
    this.detach();
    this.served++;
    if (response.keepAliveMs !== undefined) this.idleLimitMs = Math.min(this.idleLimitMs, response.keepAliveMs - KEEP_ALIVE_MARGIN_MS);
    if (response.reusable && this.idleLimitMs > 0) this.owner.connectionReusable(this);
    else this.socket.destroy();
    exchange.succeed(response);
  }

  private onClose(): void {
    const exchange = this.exchange;
    this.detach();
    if (exchange === undefined) {
      this.owner.connectionClosed(this, undefined);
      return;
    }
    // The server closed an idle keep-alive connection as the request went out: nothing was processed,
    // so sending it once more, on a fresh connection, is safe.
    if (!this.answered && this.served > 0 && !exchange.retried) {
      exchange.retried = true;
      this.owner.connectionClosed(this, exchange);
      return;
    }
    this.owner.connectionClosed(this, undefined);
    if (this.error !== undefined) {
      exchange.fail(new Error(`core connection failed: ${this.error.message}`, { cause: this.error }));
      return;
    }
    try {
      exchange.succeed(exchange.parser.end());
    } catch (err) {
      exchange.fail(err as Error);
    }
  }

  private detach(): void {
    if (this.exchange !== undefined) this.exchange.connection = undefined;
    this.exchange = undefined;
  }
}
