import { backoffBounds, backoffDelay, retryAfterDelay, sleep, type BackoffBounds } from './backoff.ts';
import { ChatApiError, ChatStreamError, ChatTokenRejectedError, type ChatStreamStopReason } from './chat-errors.ts';
import { apiErrorOf, isTokenRefusal, type HttpTransport } from './http-transport.ts';
import { SilenceTimeout, SseConnection } from './sse-connection.ts';
import type { SseEvent } from './sse-parser.ts';
import type { StreamOptions, StreamState, StreamStatus } from './stream-types.ts';

/** What a stream consumer connects to. */
export interface StreamEndpoint {
  path: string;
  /** The event name that carries a durable cursor (`message` or `notification`). */
  durableEvent: 'message' | 'notification';
  lastEventId?: string | null | undefined;
}

/** Where the consumer stands with the server's last `reauthorize` (spec 6, rule 8). */
type Reauthorization = 'none' | 'pending' | 'probation';

/** How a connection attempt ended. */
type Opened = { kind: 'open'; connection: SseConnection } | { kind: 'refused'; error: ChatApiError } | { kind: 'network'; error: unknown };

/** Transient answers to a connection attempt: wait and reconnect from the same cursor. */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);

/**
 * A resumable consumer of one room or inbox stream, following spec 6 rule 8:
 * - it resumes with `Last-Event-ID` set to the last fully processed event, and never from anything
 *   later: an event counts as processed only when `run`'s handler returned, or when the iterator's
 *   loop asks for the next event; a replay of that event after a reconnect (rule 7) is dropped;
 * - heartbeats advance nothing; no byte for `heartbeatTimeoutFactor` heartbeat intervals counts as
 *   a dead connection;
 * - `handoff` reconnects at once; a 429 or 503 with `Retry-After` waits at least that, plus full
 *   jitter; every other failure reconnects after bounded exponential backoff with full jitter
 *   (uniform over [0, step]), so the clients of a lost gateway come back spread out;
 * - `reauthorize` asks the token provider once for a fresh token and makes one connection with it;
 *   if that is refused (401, 403, `AUTHORIZATION_UNAVAILABLE`), or the connection it opened sends
 *   `reauthorize` again before delivering an event or outliving the silence timeout, the consumer
 *   stops with {@link ChatStreamError};
 * - a 401 `TOKEN_REJECTED` asks a token provider function once for a fresh token; when there is
 *   none, or its token is refused too, the consumer stops with reason `rejected` and a
 *   {@link ChatTokenRejectedError} as `cause`. A connection opened with a token counts as its
 *   acceptance, so a later refusal (the token expired, the service restarted) is asked again.
 * The token travels only in the `Authorization` header.
 */
export class ChatEventStream<E extends { type: string; id: string }> implements AsyncIterable<E> {
  private currentCursor: string | undefined;
  private currentState: StreamState = 'connecting';
  private readonly closer = new AbortController();
  private readonly bounds: BackoffBounds;
  private readonly silenceMs: number;
  private readonly maxAttempts: number;
  private readonly maxRetryAfterMs: number;
  private started = false;
  private attempt = 0;

  constructor(
    private readonly transport: HttpTransport,
    private readonly endpoint: StreamEndpoint,
    private readonly options: StreamOptions,
  ) {
    this.currentCursor = endpoint.lastEventId ?? undefined;
    this.bounds = backoffBounds(options.backoff);
    this.silenceMs = (options.heartbeatIntervalMs ?? 15_000) * (options.heartbeatTimeoutFactor ?? 3);
    this.maxAttempts = options.maxReconnectAttempts ?? Number.POSITIVE_INFINITY;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    if (options.signal?.aborted) this.close();
    else options.signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /** The last fully processed event ID: pass it as `lastEventId` to resume without loss or repeats. */
  get cursor(): string | undefined {
    return this.currentCursor;
  }

  /** The connection state. */
  get state(): StreamState {
    return this.currentState;
  }

  /** Stops the consumer: the loop (or `run`) ends without an error; the cursor stays where it is. */
  close(): void {
    if (this.closer.signal.aborted) return;
    this.closer.abort();
    if (this.currentState !== 'closed') this.setState('closed', 'closed');
  }

  /**
   * Calls `handler` for each event, one at a time, and advances the cursor when it returns. Resolves
   * when the stream is closed; rejects with the handler's error (the cursor stays before that event)
   * or with a {@link ChatStreamError}.
   */
  async run(handler: (event: E) => void | Promise<void>): Promise<void> {
    for await (const event of this) await handler(event);
  }

  /** The events, once; the cursor advances to an event when the loop asks for the one after it. */
  [Symbol.asyncIterator](): AsyncIterator<E> {
    if (this.started) throw new Error('ChatEventStream: a stream can be consumed only once; start a new one from its cursor');
    this.started = true;
    return this.events();
  }

  private async *events(): AsyncGenerator<E, void, undefined> {
    let delayMs: number | undefined;
    let forceRefresh = false;
    let refreshedAfter401 = false;
    let reauthorization: Reauthorization = 'none';
    let connection: SseConnection | undefined;
    try {
      while (!this.closer.signal.aborted) {
        if (delayMs !== undefined) {
          if (this.attempt > this.maxAttempts) {
            this.stop('retries_exhausted', `cannot reach the service at ${this.transport.baseUrl}: gave up after ${this.maxAttempts} reconnect attempts`);
          }
          try {
            await sleep(delayMs, this.closer.signal);
          } catch {
            return;
          }
        }
        this.setState('connecting', reauthorization === 'pending' ? 'reauthorize' : 'connect');
        const opened = await this.open(forceRefresh, reauthorization === 'pending');
        forceRefresh = false;
        if (this.closer.signal.aborted) return;
        if (opened.kind === 'network') {
          delayMs = this.backoff('network', opened.error instanceof Error ? opened.error : undefined);
          continue;
        }
        if (opened.kind === 'refused') {
          const { error } = opened;
          if (reauthorization === 'pending' && (error.status === 401 || error.status === 403 || error.code === 'AUTHORIZATION_UNAVAILABLE')) {
            this.stop('reauthorize_denied', `fresh authority was refused: ${error.message}`, error);
          }
          if (isTokenRefusal(error)) {
            if (this.transport.canRefreshToken && !refreshedAfter401) {
              refreshedAfter401 = forceRefresh = true;
              delayMs = undefined;
              continue;
            }
            const refused = new ChatTokenRejectedError(error, this.transport.baseUrl, this.transport.canRefreshToken);
            this.stop('rejected', refused.message, refused);
          }
          if (error.status === 429 || (TRANSIENT_STATUSES.has(error.status) && error.retryAfter !== undefined)) delayMs = this.retryAfter(error);
          else if (TRANSIENT_STATUSES.has(error.status)) delayMs = this.backoff(`http_${error.status}`, error);
          else this.stop('rejected', `the stream was refused: ${error.message}`, error);
          continue;
        }
        connection = opened.connection;
        const openedAt = Date.now();
        const healthy = (): boolean => Date.now() - openedAt >= this.silenceMs;
        if (reauthorization === 'pending') reauthorization = 'probation';
        refreshedAfter401 = false;
        this.setState('open', 'open');
        delayMs = undefined;
        for (;;) {
          let event: SseEvent | null;
          try {
            event = await connection.next();
          } catch (error) {
            if (this.closer.signal.aborted) return;
            if (healthy()) this.attempt = 0;
            delayMs = this.backoff(error instanceof SilenceTimeout ? 'silence' : 'network', error instanceof Error ? error : undefined);
            break;
          }
          if (event === null) {
            if (healthy()) this.attempt = 0;
            delayMs = this.backoff('ended');
            break;
          }
          if (event.event === 'heartbeat') {
            this.status('open', 'heartbeat');
          } else if (event.event === 'handoff') {
            this.status('connecting', 'handoff');
            break;
          } else if (event.event === 'reauthorize') {
            if (reauthorization === 'probation' && !healthy()) {
              this.stop('reauthorize_repeated', 'the server asked for fresh authority again right after it was given');
            }
            reauthorization = 'pending';
            forceRefresh = true;
            this.status('connecting', 'reauthorize');
            break;
          } else if (event.event === this.endpoint.durableEvent) {
            if (!event.hasId) this.stop('protocol_error', `a ${event.event} event arrived without an id`);
            // Rule 7: the reconnect may replay the event processed last; handlers see each event once.
            if (event.lastEventId === this.currentCursor) continue;
            yield { type: event.event, id: event.lastEventId, data: parseData(event, (reason, message) => this.stop(reason, message)) } as unknown as E;
            // The consumer asked for the next event, so this one is fully processed.
            this.currentCursor = event.lastEventId;
            this.attempt = 0;
            reauthorization = 'none';
          }
        }
        connection.close();
        connection = undefined;
      }
    } finally {
      connection?.close();
      this.close();
    }
  }

  /** One connection attempt from the current cursor. */
  private async open(forceRefresh: boolean, freshAuthority: boolean): Promise<Opened> {
    let token: string;
    try {
      token = await this.transport.token(forceRefresh);
    } catch (error) {
      this.stop('token_unavailable', `the token provider failed${freshAuthority ? ' to give fresh authority' : ''}`, error);
    }
    const controller = new AbortController();
    const onClose = (): void => controller.abort();
    this.closer.signal.addEventListener('abort', onClose, { once: true });
    const timer = setTimeout(() => controller.abort(new SilenceTimeout(`no response for ${this.silenceMs} ms`)), this.silenceMs);
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream', Authorization: `Bearer ${token}` };
      if (this.currentCursor !== undefined) headers['Last-Event-ID'] = this.currentCursor;
      const response = await this.transport.fetch(this.transport.url(this.endpoint.path), { headers, signal: controller.signal, cache: 'no-store' });
      if (!response.ok) {
        const error = apiErrorOf(response, await response.text());
        this.closer.signal.removeEventListener('abort', onClose);
        return { kind: 'refused', error };
      }
      const type = response.headers.get('content-type') ?? '';
      if (!type.startsWith('text/event-stream') || !response.body) {
        controller.abort();
        this.stop('protocol_error', `expected text/event-stream, got ${type || 'no body'}`);
      }
      const dispose = (): void => this.closer.signal.removeEventListener('abort', onClose);
      return { kind: 'open', connection: new SseConnection(response.body, controller, this.silenceMs, dispose) };
    } catch (error) {
      this.closer.signal.removeEventListener('abort', onClose);
      controller.abort();
      if (error instanceof ChatStreamError) throw error;
      return { kind: 'network', error };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Counts a failed attempt and returns its backoff delay. */
  private backoff(reason: string, error?: Error): number {
    const delayMs = backoffDelay(this.attempt, this.bounds);
    this.attempt += 1;
    this.setState('backoff', reason, { delayMs, ...(error ? { error } : {}) });
    return delayMs;
  }

  /** The wait a 429 or 503 asks for: at least `Retry-After` (spec 6 rule 9, spec 7), plus full jitter, at most `maxRetryAfterMs`. */
  private retryAfter(error: ChatApiError): number {
    const reason = `http_${error.status}`;
    if (error.retryAfter === undefined) return this.backoff(reason, error);
    const delayMs = retryAfterDelay(error.retryAfter, this.attempt, this.bounds, this.maxRetryAfterMs);
    this.attempt += 1;
    this.setState('backoff', reason, { delayMs, error });
    return delayMs;
  }

  private stop(reason: ChatStreamStopReason, message: string, cause?: unknown): never {
    const error = new ChatStreamError(reason, message, this.currentCursor, cause === undefined ? undefined : { cause });
    this.setState('closed', 'stopped', { error });
    throw error;
  }

  private setState(state: StreamState, reason: string, extra: Partial<StreamStatus> = {}): void {
    if (this.currentState === 'closed' && state !== 'closed') return;
    this.currentState = state;
    this.status(state, reason, extra);
  }

  private status(state: StreamState, reason: string, extra: Partial<StreamStatus> = {}): void {
    try {
      this.options.onStatus?.({ state, reason, attempt: this.attempt, cursor: this.currentCursor, ...extra });
    } catch {
      // A faulty status listener must not break delivery.
    }
  }
}

/** The JSON data of a durable event; anything else breaks the contract and stops the consumer. */
function parseData(event: SseEvent, stop: (reason: ChatStreamStopReason, message: string) => never): unknown {
  try {
    return JSON.parse(event.data);
  } catch {
    return stop('protocol_error', `a ${event.event} event carried data that is not JSON`);
  }
}
