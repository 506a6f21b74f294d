import type { HttpTransport } from './http-transport.ts';
import type { StreamOptions, StreamState } from './stream-types.ts';

/** What a stream consumer connects to. */
export interface StreamEndpoint {
  path: string;
  /** The event name that carries a durable cursor (`message` or `notification`). */
  durableEvent: 'message' | 'notification';
  lastEventId?: string | null | undefined;
}

/**
 * A resumable consumer of one room or inbox stream (spec 6, rule 8).
 */
export class ChatEventStream<E extends { type: string; id: string }> implements AsyncIterable<E> {
  private currentCursor: string | undefined;
  private currentState: StreamState = 'connecting';

  constructor(
    private readonly transport: HttpTransport,
    private readonly endpoint: StreamEndpoint,
    private readonly options: StreamOptions,
  ) {
    this.currentCursor = endpoint.lastEventId ?? undefined;
  }

  /** The last fully processed event ID: resume from it with `lastEventId`. */
  get cursor(): string | undefined {
    return this.currentCursor;
  }

  /** The connection state. */
  get state(): StreamState {
    return this.currentState;
  }

  /** Stops the consumer; a pending `next()` ends the loop, and `run` resolves. */
  close(): void {
    this.currentState = 'closed';
  }

  /** Calls `handler` for each event, one at a time; the cursor advances when the handler returns. */
  async run(handler: (event: E) => void | Promise<void>): Promise<void> {
    for await (const event of this) await handler(event);
  }

  [Symbol.asyncIterator](): AsyncIterator<E> {
    void this.transport;
    void this.endpoint;
    void this.options;
    throw new Error('ChatEventStream: under construction');
  }
}
