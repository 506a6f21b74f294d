import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { OpenApiValidator } from '../harness/openapi-validator.ts';

const validator = new OpenApiValidator();

export interface InboxEvent {
  /** The SSE id: the notification's durable cursor. */
  id: string;
  data: Record<string, unknown>;
  /** performance.now() when the event was parsed. */
  receivedAt: number;
}

export interface ReaderOptions {
  /** Gateways to spread connections over (one chosen at random per connection). */
  gatewayUrls: string[];
  repositoryId: string;
  token: string;
  /** How long one connection lasts before the reader drops it and resumes; `Infinity` keeps it. */
  connectionMs: () => number;
  random?: () => number;
}

/**
 * An inbox stream consumer that behaves like a careful client: it reconnects (to a random gateway)
 * with its last durable cursor in `Last-Event-ID` (or `?cursor=`, at random) whenever it drops the
 * connection itself, the server ends it (`handoff`, `reauthorize`) or a refusal asks it to wait.
 * Every `notification` event is checked against the contract as it arrives.
 */
export class ResumingInboxReader {
  readonly events: InboxEvent[] = [];
  readonly controlEvents: EventSourceMessage[] = [];
  /** Contract problems seen (event data, ids, refusals). */
  readonly problems: string[] = [];
  /** Non-200 statuses answered to (re)connects. */
  readonly refusals: number[] = [];
  connections = 0;
  private stopped = false;
  private current: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private readonly random: () => number;

  constructor(private readonly options: ReaderOptions) {
    this.random = options.random ?? Math.random;
  }

  start(): void {
    this.loop = this.run();
  }

  /** Stops reconnecting and closes the open connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.abort();
    await this.loop;
  }

  /** Resolves once `count` notifications arrived, or rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (Date.now() > deadline) throw new Error(`inbox reader got ${this.events.length} of ${count} notifications in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Resolves once the reader has made `count` connections, or rejects after `timeoutMs`. A fast run
   * can deliver everything before a reader's random drops and the gateways' rotations add up to a
   * few reconnects; waiting for them makes every reader resume from a cursor several times.
   */
  async waitForConnections(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.connections < count) {
      if (Date.now() > deadline) throw new Error(`inbox reader made ${this.connections} of ${count} connections in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async run(): Promise<void> {
    let backoffMs = 50;
    while (!this.stopped) {
      const status = await this.connectOnce().catch(() => 0);
      if (this.stopped) return;
      if (status === 200) backoffMs = 50;
      else backoffMs = Math.min(2000, backoffMs * 2);
      await new Promise((r) => setTimeout(r, status === 200 ? 0 : backoffMs * (0.5 + this.random())));
    }
  }

  private async connectOnce(): Promise<number> {
    const { gatewayUrls, repositoryId, token } = this.options;
    const base = gatewayUrls[Math.floor(this.random() * gatewayUrls.length)]!;
    const last = this.events.at(-1)?.id;
    const byQuery = last !== undefined && this.random() < 0.3;
    const path = `/v1/repositories/${repositoryId}/inbox/events${byQuery ? `?cursor=${encodeURIComponent(last)}` : ''}`;
    const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${token}` };
    if (last !== undefined && !byQuery) headers['last-event-id'] = last;
    const abort = new AbortController();
    this.current = abort;
    const limit = this.options.connectionMs();
    const timer = Number.isFinite(limit) ? setTimeout(() => abort.abort(), limit) : undefined;
    try {
      const response = await fetch(base + path, { headers, signal: abort.signal });
      this.connections++;
      if (response.status !== 200) {
        const text = await response.text();
        this.refusals.push(response.status);
        this.problems.push(...validator.problems({ method: 'GET', path, status: response.status, headers: Object.fromEntries(response.headers), body: text }));
        return response.status;
      }
      if (!/^text\/event-stream/.test(response.headers.get('content-type') ?? '')) this.problems.push('200 without text/event-stream');
      if (!response.headers.get('x-request-id')) this.problems.push('200 without X-Request-Id');
      const parser = createParser({ onEvent: (event) => this.accept(event) });
      const decoder = new TextDecoder();
      const reader = response.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
      return 200;
    } catch (err) {
      if (abort.signal.aborted) return 200;
      throw err;
    } finally {
      clearTimeout(timer);
      this.current = undefined;
    }
  }

  private accept(event: EventSourceMessage): void {
    if (event.event !== 'notification') {
      if (event.id !== undefined) this.problems.push(`${event.event} event carries an id`);
      this.controlEvents.push(event);
      return;
    }
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(event.data) as Record<string, unknown>;
    } catch {
      this.problems.push(`notification data is not JSON: ${event.data.slice(0, 100)}`);
      return;
    }
    this.problems.push(...validator.schemaProblems('NotificationResponse', data));
    if (event.id === undefined || event.id !== data.cursor) this.problems.push(`notification id ${event.id} differs from its cursor ${String(data.cursor)}`);
    this.events.push({ id: event.id ?? '', data, receivedAt: performance.now() });
  }
}
