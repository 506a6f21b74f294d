import { request, type IncomingMessage } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface StreamResponse {
  status: number;
  headers: IncomingMessage['headers'];
  /** Parsed error body for non-200 answers. */
  body?: any;
}

/**
 * A test client of one SSE response: real HTTP (its own socket, no pooling), parsed by the
 * independent eventsource-parser. Collects events and tells when the server ended the stream.
 */
export class SseClient {
  readonly events: EventSourceMessage[] = [];
  response!: StreamResponse;
  ended = false;
  /** true when the connection broke instead of ending cleanly. */
  aborted = false;
  private waiters: Array<() => void> = [];
  private incoming: IncomingMessage | undefined;
  private readonly req;

  constructor(url: string, headers: Record<string, string>) {
    this.req = request(url, { headers: { connection: 'close', ...headers }, agent: false });
  }

  /** Sends the request and resolves with the status (and the body, when it is not a stream). */
  open(): Promise<StreamResponse> {
    return new Promise((resolve, reject) => {
      this.req.on('error', (err) => {
        this.aborted = true;
        this.finish();
        if (!this.response) reject(err);
      });
      this.req.on('response', (res) => {
        this.incoming = res;
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            this.response = { status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined };
            this.finish();
            resolve(this.response);
          });
          return;
        }
        this.response = { status: 200, headers: res.headers };
        const parser = createParser({
          onEvent: (event) => {
            this.events.push(event);
            this.notify();
          },
        });
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => this.finish());
        res.on('aborted', () => {
          this.aborted = true;
        });
        res.on('error', () => {
          this.aborted = true;
          this.finish();
        });
        res.on('close', () => this.finish());
        resolve(this.response);
      });
      this.req.end();
    });
  }

  /** Stops reading (the socket's buffers fill and the server sees a slow consumer). */
  pause(): void {
    this.incoming?.pause();
  }

  resume(): void {
    this.incoming?.resume();
  }

  close(): void {
    this.req.destroy();
    this.finish();
  }

  messages(): EventSourceMessage[] {
    return this.events.filter((e) => e.event === 'message');
  }

  /** Waits until `predicate` holds over what arrived, or fails after `timeoutMs`. */
  async waitFor(predicate: (client: SseClient) => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${this.events.length} events, ended=${this.ended}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitForMessages(count: number, timeoutMs = 5000): Promise<void> {
    return this.waitFor((c) => c.messages().length >= count, timeoutMs, `${count} messages`);
  }

  waitForEnd(timeoutMs = 5000): Promise<void> {
    return this.waitFor((c) => c.ended, timeoutMs, 'end of stream');
  }

  private finish(): void {
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** Opens a stream on `base + path` with a bearer token and extra headers. */
export async function openSse(base: string, path: string, token: string | undefined, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = new SseClient(`${base}${path}`, {
    accept: 'text/event-stream',
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    ...headers,
  });
  await client.open();
  return client;
}
