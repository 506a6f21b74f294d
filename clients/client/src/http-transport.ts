import { abortReason, backoffBounds, backoffDelay, parseRetryAfter, retryAfterDelay, sleep, type BackoffBounds } from './backoff.ts';
import { ChatApiError, ChatNetworkError, ChatTokenRejectedError } from './chat-errors.ts';
import type { ChatClientOptions, TokenProvider } from './client-options.ts';
import { assertSafeTransport, bareToken } from './credentials.ts';

/** One logical HTTP call; retries repeat it unchanged (same headers, same Idempotency-Key). */
interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | null | undefined>;
  headers?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal | undefined;
  requestId?: string | undefined;
}

/** A successful answer. */
interface HttpResult<T> {
  status: number;
  body: T;
  requestId: string | undefined;
}

/** Statuses worth another attempt: rate limit, and the gateway or service being (briefly) unavailable. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/**
 * Sends requests with the bearer token and the retry rules of the SDK: network failures, 429, 502,
 * 503 and 504 are retried with bounded exponential backoff and jitter (waiting `Retry-After` when
 * given); other 4xx never are. A 401 with a token function gets one retry with a forced refresh;
 * a refused token ends the call with {@link ChatTokenRejectedError}. A 401
 * `CORE_RESOURCE_TOKEN_REJECTED` refuses the author's core credential, not the bearer token, so it
 * asks the provider for nothing and is not sent again.
 */
export class HttpTransport {
  readonly baseUrl: string;
  readonly fetch: typeof globalThis.fetch;
  private readonly tokenProvider: TokenProvider;
  private readonly maxAttempts: number;
  private readonly maxRetryAfterMs: number;
  private readonly bounds: BackoffBounds;
  private readonly requestTimeoutMs: number;

  constructor(options: ChatClientOptions) {
    if (!options.baseUrl) throw new TypeError('ChatClient: baseUrl is required');
    if (options.token === undefined || options.token === '') throw new TypeError('ChatClient: token is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    assertSafeTransport(this.baseUrl, options.allowInsecureHttp === true);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('ChatClient: no fetch implementation available');
    // Bound so a browser's fetch is not called with `this` set to the client (an "Illegal invocation").
    this.fetch = fetchImpl.bind(globalThis);
    this.tokenProvider = typeof options.token === 'string' ? bareToken(options.token, 'token') : options.token;
    this.maxAttempts = Math.max(1, options.retry?.maxAttempts ?? 5);
    this.maxRetryAfterMs = options.retry?.maxRetryAfterMs ?? 60_000;
    this.bounds = backoffBounds(options.retry);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  }

  /** True when the token comes from a function that can mint a fresh one. */
  get canRefreshToken(): boolean {
    return typeof this.tokenProvider === 'function';
  }

  /** The current token; `forceRefresh` asks a token function for a fresh one. */
  async token(forceRefresh: boolean): Promise<string> {
    if (typeof this.tokenProvider === 'string') return this.tokenProvider;
    const token = await this.tokenProvider({ forceRefresh });
    if (typeof token !== 'string' || token.trim() === '') throw new TypeError('ChatClient: the token provider returned no token');
    return bareToken(token, 'the token provider\'s token');
  }

  /** Absolute URL of `path` with the given query parameters (empty ones left out). */
  url(path: string, query?: HttpRequest['query']): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) params.set(key, String(value));
    }
    const search = params.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  /** Sends `request`, retrying as the class describes; resolves with the parsed JSON body. */
  async call<T>(request: HttpRequest): Promise<HttpResult<T>> {
    let forceRefresh = false;
    let refreshed = false;
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt + 1 >= this.maxAttempts;
      // A token provider's failure is the caller's to see at once, not a network failure to retry.
      const token = await this.token(forceRefresh);
      let answer: { response: Response; text: string };
      try {
        answer = await this.attempt(request, token);
      } catch (error) {
        if (request.signal?.aborted) throw abortReason(request.signal);
        if (last) throw new ChatNetworkError(this.baseUrl, `no answer to ${request.method} ${request.path} after ${attempt + 1} attempts`, { cause: error });
        await sleep(backoffDelay(attempt, this.bounds), request.signal);
        continue;
      }
      const { response, text } = answer;
      // A 204 has no body: its result's body is undefined.
      if (response.ok) return { status: response.status, body: response.status === 204 ? (undefined as T) : parseBody<T>(response, text), requestId: requestIdOf(response) };
      const error = apiErrorOf(response, text);
      error.attempts = attempt + 1;
      if (isTokenRefusal(error)) {
        if (this.canRefreshToken && !refreshed) {
          refreshed = forceRefresh = true;
          continue;
        }
        throw new ChatTokenRejectedError(error, this.baseUrl, this.canRefreshToken);
      }
      forceRefresh = false;
      if (!RETRYABLE_STATUSES.has(response.status) || last) throw error;
      // A Retry-After longer than the client waits for is the caller's to see at once.
      if (error.retryAfter !== undefined && error.retryAfter * 1000 > this.maxRetryAfterMs) throw error;
      const delay = error.retryAfter === undefined ? backoffDelay(attempt, this.bounds) : retryAfterDelay(error.retryAfter, attempt, this.bounds, this.maxRetryAfterMs);
      await sleep(delay, request.signal);
    }
  }

  /** One attempt: the response and its whole body, within the per-attempt timeout. */
  private async attempt(request: HttpRequest, token: string): Promise<{ response: Response; text: string }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${this.requestTimeoutMs} ms`)), this.requestTimeoutMs);
    const onAbort = (): void => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const headers: Record<string, string> = { Accept: 'application/json', Authorization: `Bearer ${token}`, ...request.headers };
      if (request.requestId) headers['X-Request-Id'] = request.requestId;
      if (request.body !== undefined) headers['Content-Type'] = 'application/json';
      const response = await this.fetch(this.url(request.path, request.query), {
        method: request.method,
        headers,
        body: request.body === undefined ? null : JSON.stringify(request.body),
        signal: controller.signal,
      });
      // Reading the body inside the attempt makes a connection cut mid-body a network failure (retried).
      return { response, text: await response.text() };
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** A 401 about the bearer token itself (not about the core credential an append lends). */
export function isTokenRefusal(error: ChatApiError): boolean {
  return error.status === 401 && error.code !== 'CORE_RESOURCE_TOKEN_REJECTED';
}

/** The `X-Request-Id` header, if any. */
function requestIdOf(response: Response): string | undefined {
  return response.headers.get('x-request-id') ?? undefined;
}

function parseBody<T>(response: Response, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ChatApiError({
      code: 'UNEXPECTED_RESPONSE',
      status: response.status,
      requestId: requestIdOf(response),
      message: 'the success response is not JSON',
      details: text.slice(0, 500),
    });
  }
}

/** Builds the typed error of an error answer from its envelope (or from the status when there is none). */
export function apiErrorOf(response: Response, text: string): ChatApiError {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text.slice(0, 500);
  }
  const body = (parsed as { error?: { code?: unknown; message?: unknown; requestId?: unknown } } | null)?.error;
  if (body && typeof body.code === 'string') {
    return new ChatApiError({
      code: body.code,
      status: response.status,
      requestId: typeof body.requestId === 'string' ? body.requestId : requestIdOf(response),
      message: typeof body.message === 'string' ? body.message : response.statusText,
      retryAfter,
    });
  }
  return new ChatApiError({
    code: 'UNEXPECTED_RESPONSE',
    status: response.status,
    requestId: requestIdOf(response),
    message: `HTTP ${response.status} without an error envelope`,
    retryAfter,
    details: parsed,
  });
}
