/**
 * Base class of every error the SDK throws, so callers can tell SDK failures from their own.
 */
export class ChatError extends Error {
  override name = 'ChatError';
}

/** What the client knows about a failed HTTP exchange. */
export interface ChatApiErrorInit {
  /** The envelope's `error.code`, or `UNEXPECTED_RESPONSE` when the body is not an envelope. */
  code: string;
  /** HTTP status of the response. */
  status: number;
  /** The envelope's `error.requestId`, else the `X-Request-Id` header; `undefined` when neither is present. */
  requestId: string | undefined;
  /** The envelope's `error.message`. */
  message: string;
  /** `Retry-After` in whole seconds, when the response carried one. */
  retryAfter?: number | undefined;
  /** The parsed body of a non-envelope response, for diagnosis. */
  details?: unknown;
}

/**
 * The service answered with an error. Carries the envelope's `code` (spec 7), the HTTP `status`,
 * the `requestId` to quote in a report, and `retryAfter` (seconds) on 429 and 503 answers.
 */
export class ChatApiError extends ChatError {
  override name = 'ChatApiError';
  readonly code: string;
  readonly status: number;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly details: unknown;
  /** Attempts the call made before this answer ended it (retries included). */
  attempts = 1;

  constructor(init: ChatApiErrorInit) {
    super(`${init.code} (${init.status}): ${init.message}`);
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
  }
}

/**
 * The request never got an answer: a refused or cut connection, a timeout, or a body cut short.
 * Thrown only after the retry budget is spent; `cause` holds the last underlying failure.
 */
export class ChatNetworkError extends ChatError {
  override name = 'ChatNetworkError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Why a stream consumer stopped for good. */
export type ChatStreamStopReason =
  /** After a `reauthorize` event the one fresh-authority attempt was refused (401, 403) or unavailable (503). */
  | 'reauthorize_denied'
  /** A second `reauthorize` arrived on the connection opened with fresh authority, before it delivered anything. */
  | 'reauthorize_repeated'
  /** The token provider threw while the consumer asked it for fresh authority. */
  | 'token_unavailable'
  /** The service refused the stream with an error that retrying cannot fix (400, 401, 403, 404, 409). */
  | 'rejected'
  /** The server sent an event the contract does not allow (a durable event without id, or data that is not JSON). */
  | 'protocol_error'
  /** The reconnect budget (`maxReconnectAttempts`) is spent. */
  | 'retries_exhausted';

/**
 * A stream consumer stopped and will not reconnect by itself. `cursor` is the last fully processed
 * event ID: start a new consumer from it (as `lastEventId`) to go on without losing or repeating events.
 */
export class ChatStreamError extends ChatError {
  override name = 'ChatStreamError';
  readonly reason: ChatStreamStopReason;
  readonly cursor: string | undefined;

  constructor(reason: ChatStreamStopReason, message: string, cursor: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
    this.cursor = cursor;
  }
}
