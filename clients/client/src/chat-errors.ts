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
 * The service refused the bearer token (401 `TOKEN_REJECTED` or `AUTHENTICATION_REQUIRED`): it
 * expired, was revoked, or was signed by keys the service no longer trusts. A token provider
 * function has been asked once more with `forceRefresh` before this is thrown; `renewable` tells
 * whether there was one. The message says what to do; it never quotes the token.
 */
export class ChatTokenRejectedError extends ChatApiError {
  override name = 'ChatTokenRejectedError';
  /** The service base URL that refused the token. */
  readonly baseUrl: string;
  /** True when the token came from a provider function (and its fresh token was refused too). */
  readonly renewable: boolean;

  constructor(refusal: ChatApiError, baseUrl: string, renewable: boolean) {
    const advice = renewable
      ? 'the token provider was asked for a fresh token and that one was refused too: check what it returns'
      : 'a fixed token cannot be renewed: pass a new one, or a provider function (`token: ({ forceRefresh }) => ...`) that returns a fresh token when asked';
    super({ code: refusal.code, status: refusal.status, requestId: refusal.requestId, message: `the service at ${baseUrl} refused the token; ${advice}` });
    this.baseUrl = baseUrl;
    this.renewable = renewable;
    this.attempts = refusal.attempts;
  }
}

/**
 * The request never got an answer: a refused or cut connection, a timeout, or a body cut short.
 * Thrown only after the retry budget is spent; `cause` holds the last underlying failure. The
 * message names the base URL tried, `cannot reach the service at <baseUrl>: ...`.
 */
export class ChatNetworkError extends ChatError {
  override name = 'ChatNetworkError';
  /** The service base URL the request was sent to. */
  readonly baseUrl: string;
  constructor(baseUrl: string, message: string, options?: { cause?: unknown }) {
    super(`cannot reach the service at ${baseUrl}: ${message}${causeText(options?.cause)}`, options);
    this.baseUrl = baseUrl;
  }
}

/**
 * The client refuses to send a bearer token over plain `http://` to a host that is not loopback
 * (anyone on the path could read and reuse it). Use `https://`, or set `allowInsecureHttp` when the
 * network is trusted.
 */
export class ChatInsecureTransportError extends ChatError {
  override name = 'ChatInsecureTransportError';
  /** The refused base URL. */
  readonly baseUrl: string;
  constructor(baseUrl: string) {
    super(`refusing to send a token over plain http to ${baseUrl}: use https, or allow it explicitly (allowInsecureHttp: true) on a network you trust`);
    this.baseUrl = baseUrl;
  }
}

/** ` (reason)` of the underlying failure, e.g. ` (ECONNREFUSED)`, or nothing when it tells nothing. */
function causeText(cause: unknown): string {
  if (!(cause instanceof Error)) return '';
  // undici reports every connection failure as "fetch failed" and keeps the reason one level deeper.
  const inner = cause.cause as { code?: unknown; message?: unknown } | undefined;
  const reason = typeof inner?.code === 'string' ? inner.code : cause.message;
  return reason ? ` (${reason})` : '';
}

/** Why a stream consumer stopped for good. */
export type ChatStreamStopReason =
  /** After a `reauthorize` event the one fresh-authority attempt was refused (401, 403) or unavailable (503). */
  | 'reauthorize_denied'
  /** A second `reauthorize` arrived on the connection opened with fresh authority, before it delivered anything. */
  | 'reauthorize_repeated'
  /** The token provider threw while the consumer asked it for fresh authority. */
  | 'token_unavailable'
  /**
   * The service refused the stream with an error that retrying cannot fix (400, 401, 403, 404, 409);
   * `cause` is the `ChatApiError`. A refused token (also the fresh one a provider gave when asked
   * again) is a {@link ChatTokenRejectedError}.
   */
  | 'rejected'
  /** The server sent an event the contract does not allow (a durable event without id, or data that is not JSON). */
  | 'protocol_error'
  /** The reconnect budget (`maxReconnectAttempts`) is spent; the message names the base URL. */
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
