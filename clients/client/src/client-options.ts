import type { SearchOrder } from './contract-types.ts';

/** Why the client asks the token provider for a token. */
export interface TokenRequest {
  /**
   * True when the last token was refused (401) or the server asked for fresh authority (`reauthorize`):
   * a caching provider must not return the cached token.
   */
  forceRefresh: boolean;
}

/**
 * A bearer token, or a function that returns one (the bare token; the client adds `Bearer `). A
 * function is called before every request and stream connection (cache inside it if minting is
 * costly) and with `forceRefresh` after a 401 `TOKEN_REJECTED` (once; a second refusal ends the call
 * or stream with `ChatTokenRejectedError`) or a `reauthorize` event. Long-running consumers
 * need a function: a token expires, and a service restart can invalidate it. The token is sent only
 * in the `Authorization` header, never in a URL.
 *
 * @example
 * // Re-read a file that something else keeps fresh:
 * token: () => readFile('/run/secrets/chat-token', 'utf8')
 */
export type TokenProvider = string | ((request: TokenRequest) => string | Promise<string>);

/**
 * Bounded exponential backoff with full jitter (each delay uniform over [0, step]), shared by REST
 * retries and stream reconnects; an answer with `Retry-After` waits at least that, plus the jitter.
 */
export interface BackoffOptions {
  /** First retry's step: its delay is uniform over [0, baseDelayMs]. @defaultValue 200 */
  baseDelayMs?: number;
  /** Upper bound of one step. @defaultValue 5000 */
  maxDelayMs?: number;
  /** The jitter's random source, in [0, 1) (a seeded one makes delays reproducible in tests). @defaultValue Math.random */
  random?: () => number;
}

/** Retry policy of REST operations. */
export interface RetryOptions extends BackoffOptions {
  /** Attempts per logical call, the first included; 1 disables retries. @defaultValue 5 */
  maxAttempts?: number;
  /**
   * Longest `Retry-After` the client waits for. A 429 or 503 asking for longer surfaces as a
   * `ChatApiError` at once, so a caller is never blocked for minutes without knowing. @defaultValue 60000
   */
  maxRetryAfterMs?: number;
}

/** Options of {@link ChatClient}. */
export interface ChatClientOptions {
  /** Service origin and optional path prefix, e.g. `http://127.0.0.1:8080`; `/v1/...` is appended. */
  baseUrl: string;
  /** The caller's bearer token or a provider of fresh ones (see {@link TokenProvider}). */
  token: TokenProvider;
  /**
   * Send the token over plain `http://` to a host that is not loopback (127.0.0.0/8, ::1,
   * `localhost`). Without it such a `baseUrl` throws `ChatInsecureTransportError`: anyone on
   * the path could read the token. @defaultValue false
   */
  allowInsecureHttp?: boolean;
  /** The fetch implementation. @defaultValue globalThis.fetch */
  fetch?: typeof globalThis.fetch;
  /** REST retry policy. */
  retry?: RetryOptions;
  /** Abort one REST attempt after this long and count it as a network failure. @defaultValue 30000 */
  requestTimeoutMs?: number;
}

/** Per-call options of every REST operation. */
export interface RequestOptions {
  /** Cancels the call, including any wait between retries. */
  signal?: AbortSignal;
  /** `X-Request-Id` to send (1–128 of `[A-Za-z0-9._:-]`); the server makes one when absent. */
  requestId?: string;
}

/** A repository room (no `branchId`) or a branch room. */
export interface RoomRef {
  repositoryId: string;
  /** Canonical ULID of the branch; absent or null for the repository room. */
  branchId?: string | null;
}

/** Options of one page of a list operation. */
export interface PageOptions extends RequestOptions {
  /** `nextCursor` of the previous page; absent for the first page. */
  cursor?: string | null;
  /** Page size, 1..200. @defaultValue the server's default (50) */
  limit?: number;
}

/** Options of the iterators that walk every page of a list. */
export interface PaginateOptions extends RequestOptions {
  /** Start after this cursor (a page's `nextCursor` or a stream event's id); absent starts at the oldest. */
  after?: string | null;
  /** Page size of each request, 1..200. @defaultValue 200 */
  pageSize?: number;
}

/**
 * Options of one page of the history extension (listMessageHistory). At most one of `before`,
 * `after` and `at`, each a message cursor of the room (an item's entry in `cursors`, a page's
 * `nextCursor`, or a stream event's id); none reads the newest messages.
 */
export interface HistoryPageOptions extends RequestOptions {
  /** Read the messages just before this message. */
  before?: string | null;
  /** Read the messages just after this message. */
  after?: string | null;
  /** Read this message and those just after it. */
  at?: string | null;
  /** Page size, 1..200. @defaultValue the server's default (50) */
  limit?: number;
}

/** Options of the iterator that walks a room from its newest message back. */
export interface BackwardPaginateOptions extends RequestOptions {
  /** Start just before this message's cursor; absent starts at the newest message. */
  before?: string | null;
  /** Page size of each request, 1..200. @defaultValue 100 */
  pageSize?: number;
}

/**
 * Where a search looks (the search extension): the repository room and every branch room of a
 * repository (`{ repositoryId }`, searchRepository), or one room (`{ room }`, searchRepositoryRoom
 * or searchBranchRoom by the room's `branchId`).
 */
export type SearchScope = { repositoryId: string } | { room: RoomRef };

/** What a search asks for; every page of one walk must be asked with the same values. */
export interface SearchOptions {
  /**
   * The query: words, `"exact phrases"` and filters (`from:`, `mentions:`, `in:`, `before:`,
   * `after:`, `has:code`, `has:link`; `in:` only on a repository scope), 1 to 512 characters.
   */
  q: string;
  /** `relevance` (most relevant first) or `newest` (newest first). @defaultValue the server's (`relevance`) */
  order?: SearchOrder;
  /** Results per page, 1..200. @defaultValue the server's default (50) */
  limit?: number;
}

/** Options of one page of a search. */
export interface SearchPageOptions extends SearchOptions {
  /** The previous page's `nextCursor` (same `q`, `order` and scope); absent for the first page. */
  cursor?: string | null;
}

/** Options of an append. */
export interface AppendOptions extends RequestOptions {
  /**
   * Idempotency-Key (canonical ULID) of this logical send. Pass your own to make a send repeatable
   * across process restarts (a replay answers 200 with the original message). @defaultValue a fresh ULID
   */
  idempotencyKey?: string;
  /**
   * The author's core OAuth resource credential, bare like `token` (the client sends it as
   * `X-Service-Core-Authorization: Bearer <token>`); needed only for mentions in a person's message.
   */
  coreResourceToken?: string;
}
