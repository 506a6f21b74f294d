/**
 * The error codes of spec section 7 and the one place that maps each to an HTTP status.
 * Every error body the service writes carries one of these codes.
 */
export const ERROR_CODES = [
  'AUTHENTICATION_REQUIRED',
  'AUTHORIZATION_DENIED',
  'AUTHORIZATION_REQUEST_INVALID',
  'AUTHORIZATION_UNAVAILABLE',
  'CORE_RESOURCE_TOKEN_REJECTED',
  'CORE_RESOURCE_TOKEN_REQUIRED',
  'CURSOR_CONFLICT',
  'CURSOR_INVALID',
  'CURSOR_UNAVAILABLE',
  'IDEMPOTENCY_KEY_INVALID',
  'IDEMPOTENCY_KEY_REUSED',
  'INBOX_CHECKPOINT_STALE',
  'LIMIT_INVALID',
  'MESSAGE_BUILD_FAILED',
  'MESSAGE_INVALID',
  'MENTION_INVALID',
  'MENTION_TARGET_INVALID',
  'RATE_LIMITED',
  'REQUEST_ID_INVALID',
  'REQUEST_INVALID',
  'RESOURCE_CONFLICT',
  'RESOURCE_NOT_FOUND',
  'RESPONSE_INVALID',
  'ROOM_CREATE_UNAVAILABLE',
  'ROOM_INCOHERENT',
  'ROOM_SEALED',
  'SCOPE_INVALID',
  'STORE_UNAVAILABLE',
  'STREAM_HANDOFF_FAILED',
  'STREAM_PRINCIPAL_LIMIT',
  'STREAM_ROOM_LIMIT',
  'STREAM_TARGET_INVALID',
  'STREAM_UNAVAILABLE',
  'TOKEN_REJECTED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Status for every code. The spec fixes some pairs (section 7's stated conditions); the rest are
 * this service's decisions, chosen so each operation only answers with the statuses section 4 lists.
 * `RESPONSE_INVALID` is the code of the one unexpected-failure answer (500): the server could not
 * build a valid response, and says nothing more.
 */
const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  AUTHENTICATION_REQUIRED: 401,
  AUTHORIZATION_DENIED: 403,
  AUTHORIZATION_REQUEST_INVALID: 400,
  AUTHORIZATION_UNAVAILABLE: 503,
  CORE_RESOURCE_TOKEN_REJECTED: 401,
  CORE_RESOURCE_TOKEN_REQUIRED: 400,
  CURSOR_CONFLICT: 400,
  CURSOR_INVALID: 400,
  CURSOR_UNAVAILABLE: 400,
  IDEMPOTENCY_KEY_INVALID: 400,
  IDEMPOTENCY_KEY_REUSED: 409,
  INBOX_CHECKPOINT_STALE: 409,
  LIMIT_INVALID: 400,
  MESSAGE_BUILD_FAILED: 400,
  MESSAGE_INVALID: 400,
  MENTION_INVALID: 400,
  MENTION_TARGET_INVALID: 400,
  RATE_LIMITED: 429,
  REQUEST_ID_INVALID: 400,
  REQUEST_INVALID: 400,
  RESOURCE_CONFLICT: 409,
  RESOURCE_NOT_FOUND: 404,
  RESPONSE_INVALID: 500,
  ROOM_CREATE_UNAVAILABLE: 503,
  ROOM_INCOHERENT: 409,
  ROOM_SEALED: 409,
  SCOPE_INVALID: 400,
  STORE_UNAVAILABLE: 503,
  STREAM_HANDOFF_FAILED: 503,
  STREAM_PRINCIPAL_LIMIT: 429,
  STREAM_ROOM_LIMIT: 429,
  STREAM_TARGET_INVALID: 409,
  STREAM_UNAVAILABLE: 503,
  TOKEN_REJECTED: 401,
};

interface AppErrorOptions {
  /** Whole seconds a client should wait, sent as `Retry-After` (429 and some 503 answers). */
  retryAfterSeconds?: number;
  /** Overrides the code's usual status where one code serves two conditions (e.g. 405 for a wrong method). */
  status?: number;
  cause?: unknown;
}

/**
 * The one error type the layers throw. Its message is shown to clients, so it must never carry
 * internals or secrets; put those in `cause`, which is only logged.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
