import type { OriginPool } from './origin-pool.ts';
import type { Exchange, PooledConnection } from './pooled-connection.ts';
import type { ParsedResponse, ResponseParser } from './response-parser.ts';

/** What a call resolves to: the status and the body as text. */
export interface CallResult {
  status: number;
  text: string;
}

/**
 * One call from dispatch to answer, under one deadline covering the wait for a connection, the
 * connect, the write and the whole answer. A plain timer, cleared when the call settles, rather than
 * an AbortController: nothing else needs to observe the cancellation.
 */
export class PendingCall implements Exchange {
  connection: PooledConnection | undefined;
  retried = false;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly request: Buffer,
    readonly parser: ResponseParser,
    private readonly pool: OriginPool,
    private readonly timeoutMs: number,
    private readonly resolve: (result: CallResult) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.timer = setTimeout(expire, timeoutMs, this);
  }

  succeed(response: ParsedResponse): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve({ status: response.status, text: response.text });
  }

  fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.reject(error);
  }

  /** The deadline passed: the connection (mid-call, so not reusable) is destroyed, or the queued call dropped. */
  expire(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.connection !== undefined) this.connection.abandon();
    else this.pool.cancel(this);
    this.reject(new Error(`core did not answer within ${this.timeoutMs} ms`));
  }
}

function expire(call: PendingCall): void {
  call.expire();
}
