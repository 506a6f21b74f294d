import { openSse, type SseConnection } from './sse-stream.ts';

/** One `message` event as a client received it. */
export interface ReceivedMessage {
  /** The SSE id (the durable cursor). */
  id: string;
  data: string;
  /** Which connection of this client delivered it (1, 2, ...). */
  connection: number;
}

export interface ResumingClientOptions {
  /** Base URL of the gateway to use for the next connection (e.g. a random one). */
  pickBase: () => string;
  /** Stream path, e.g. /v1/repositories/{id}/room/events. */
  path: string;
  token: string;
  random: () => number;
  /** Close each connection after a random time in this range (ms); unset: only the server ends streams. */
  reconnectAfterMs?: [number, number];
  /** Backoff after a failed or ended connection: base and cap (ms), doubled per consecutive failure, with jitter. @defaultValue [20, 500] */
  backoffMs?: [number, number];
}

/**
 * A well-behaved SSE client (spec section 6, rule 8): it tracks the id of the last message it
 * processed and reconnects with `Last-Event-ID` after any disconnect and at random moments, with a
 * bounded, jittered exponential backoff. It records every message event with the connection that
 * delivered it, so a checker can tell an allowed replay from a duplicate.
 */
export class ResumingSseClient {
  readonly received: ReceivedMessage[] = [];
  /** Event kinds seen (message, heartbeat, handoff, ...) with counts. */
  readonly kinds = new Map<string, number>();
  /** Non-200 answers by status, and connection failures (status 0). */
  readonly refusals = new Map<number, number>();
  /** Answers the client cannot recover from (400, 401, 403, 409), with their bodies. */
  readonly fatal: string[] = [];
  lastId: string | undefined;
  connections = 0;
  private stopped = false;
  private current: SseConnection | undefined;
  private loop: Promise<void> | undefined;
  private wakeSleep: (() => void) | undefined;

  constructor(private readonly options: ResumingClientOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** Ends the current connection and the reconnect loop. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.close();
    this.wakeSleep?.();
    await this.loop;
  }

  /** Closes the current connection now; the loop reconnects with the last id. */
  dropConnection(): void {
    this.current?.close();
  }

  private async run(): Promise<void> {
    const [base, cap] = this.options.backoffMs ?? [20, 500];
    let failures = 0;
    while (!this.stopped) {
      let connection: SseConnection;
      try {
        connection = await openSse(`${this.options.pickBase()}${this.options.path}`, this.options.token, {
          headers: this.lastId === undefined ? {} : { 'last-event-id': this.lastId },
          onEvent: (event) => {
            const kind = event.event ?? 'message';
            this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
            if (kind !== 'message') return;
            this.received.push({ id: event.id ?? '', data: event.data, connection: this.connections });
            if (event.id !== undefined) this.lastId = event.id;
          },
        });
      } catch {
        this.refusals.set(0, (this.refusals.get(0) ?? 0) + 1);
        failures += 1;
        await this.sleep(this.backoff(base, cap, failures));
        continue;
      }
      if (connection.status !== 200) {
        this.refusals.set(connection.status, (this.refusals.get(connection.status) ?? 0) + 1);
        if ([400, 401, 403, 409].includes(connection.status)) {
          this.fatal.push(`${connection.status} ${connection.errorBody}`);
          return;
        }
        failures += 1;
        await this.sleep(this.backoff(base, cap, failures));
        continue;
      }
      this.connections += 1;
      this.current = connection;
      // A connection opened after stop() was called must not keep the loop alive.
      if (this.stopped) connection.close();
      let timer: NodeJS.Timeout | undefined;
      const range = this.options.reconnectAfterMs;
      if (range) timer = setTimeout(() => connection.close(), range[0] + this.options.random() * (range[1] - range[0]));
      const end = await connection.done;
      clearTimeout(timer);
      this.current = undefined;
      failures = end === 'closed-by-client' ? 0 : failures + 1;
      if (!this.stopped) await this.sleep(end === 'closed-by-client' ? 0 : this.backoff(base, cap, failures));
    }
  }

  private backoff(base: number, cap: number, failures: number): number {
    const ceiling = Math.min(cap, base * 2 ** Math.min(failures, 10));
    return ceiling / 2 + this.options.random() * (ceiling / 2);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeSleep = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

