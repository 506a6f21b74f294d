import { Agent, request as httpRequest } from 'node:http';
import { ulid } from 'ulid';
import { OpenApiValidator } from './openapi-validator.ts';

/** A repository room (no branchId) or a branch room. */
export interface RoomScope {
  repositoryId: string;
  branchId?: string | undefined;
}

export interface ApiRequest {
  method: string;
  /** Path as sent on the wire, query included; not normalized. */
  path: string;
  headers?: Record<string, string | string[] | undefined>;
  /** A value to send as JSON, or raw bytes/text sent as they are. */
  json?: unknown;
  raw?: string | Buffer;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body (undefined when it is not JSON). */
  body: T;
  requestId: string | undefined;
}

/** A response that broke the contract: every test that touches the API fails on it. */
export class ContractViolationError extends Error {
  constructor(
    readonly request: { method: string; path: string },
    readonly response: ApiResponse,
    readonly problems: string[],
  ) {
    super(`${request.method} ${request.path} → ${response.status} breaks the OpenAPI contract:\n  - ${problems.join('\n  - ')}\n  body: ${response.text.slice(0, 500)}`);
    this.name = 'ContractViolationError';
  }
}

export interface AppendOptions {
  /** @defaultValue a fresh ULID; `null` sends no Idempotency-Key */
  key?: string | null;
  coreAuthorization?: string;
  requestId?: string;
}

export function roomPath(scope: RoomScope): string {
  const base = `/v1/repositories/${scope.repositoryId}`;
  return scope.branchId === undefined ? `${base}/room` : `${base}/branches/${scope.branchId}/room`;
}

const validator = new OpenApiValidator();

/**
 * HTTP client for the chat API that checks EVERY response against the committed OpenAPI document
 * (status listed, headers, body schema, X-Request-Id) and throws ContractViolationError otherwise.
 */
export class ApiClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(readonly baseUrl: string) {}

  /** Sends a request; `validate: false` only for callers that collect violations themselves. */
  async send<T = unknown>(req: ApiRequest, options: { validate?: boolean } = {}): Promise<ApiResponse<T>> {
    const response = await this.exchange<T>(req);
    if (options.validate !== false) {
      const problems = this.problems(req, response);
      if (problems.length > 0) throw new ContractViolationError(req, response, problems);
    }
    return response;
  }

  /** Contract problems of a response to `req`. */
  problems(req: ApiRequest, response: ApiResponse): string[] {
    return validator.problems({ method: req.method, path: req.path, status: response.status, headers: response.headers, body: response.text });
  }

  getRoom<T = unknown>(scope: RoomScope, token: string | undefined, headers: Record<string, string> = {}) {
    return this.send<T>({ method: 'GET', path: roomPath(scope), headers: { ...bearer(token), ...headers } });
  }

  list<T = unknown>(scope: RoomScope, token: string | undefined, query = '', headers: Record<string, string> = {}) {
    return this.send<T>({ method: 'GET', path: `${roomPath(scope)}/messages${query ? `?${query}` : ''}`, headers: { ...bearer(token), ...headers } });
  }

  append<T = unknown>(scope: RoomScope, token: string | undefined, json: unknown, options: AppendOptions = {}) {
    const key = options.key === undefined ? ulid() : options.key;
    return this.send<T>({
      method: 'POST',
      path: `${roomPath(scope)}/messages`,
      headers: {
        ...bearer(token),
        ...(key === null ? {} : { 'idempotency-key': key }),
        ...(options.coreAuthorization === undefined ? {} : { 'x-service-core-authorization': options.coreAuthorization }),
        ...(options.requestId === undefined ? {} : { 'x-request-id': options.requestId }),
      },
      json,
    });
  }

  close(): void {
    this.agent.destroy();
  }

  /**
   * One exchange, sent once more when it failed on a kept-alive socket the server closed as the
   * request went out (its keep-alive time ran out while the socket sat idle in the pool): the server
   * never read that request, so sending it again is what any HTTP client does (Node's docs on
   * `request.reusedSocket`).
   */
  private async exchange<T>(req: ApiRequest): Promise<ApiResponse<T>> {
    try {
      return await this.exchangeOnce<T>(req);
    } catch (error) {
      if (!(error instanceof StaleSocketError)) throw error;
      return this.exchangeOnce<T>(req);
    }
  }

  private exchangeOnce<T>(req: ApiRequest): Promise<ApiResponse<T>> {
    const url = new URL(this.baseUrl);
    const payload = req.json !== undefined ? Buffer.from(JSON.stringify(req.json), 'utf8') : req.raw !== undefined ? Buffer.from(req.raw) : undefined;
    const headers: Record<string, string | string[]> = {};
    if (req.json !== undefined) headers['content-type'] = 'application/json';
    for (const [name, value] of Object.entries(req.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value;
    if (payload !== undefined) headers['content-length'] = String(payload.length);
    return new Promise((resolve, reject) => {
      const r = httpRequest(
        { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown;
            try {
              body = JSON.parse(text);
            } catch {
              body = undefined;
            }
            const requestId = res.headers['x-request-id'];
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: body as T, requestId: Array.isArray(requestId) ? requestId[0] : requestId });
          });
        },
      );
      r.on('error', (error: NodeJS.ErrnoException) => {
        const stale = r.reusedSocket && error.code === 'ECONNRESET';
        reject(stale ? new StaleSocketError(error) : error);
      });
      r.end(payload);
    });
  }
}

/** A request that failed on a reused keep-alive socket before any answer came. */
class StaleSocketError extends Error {
  constructor(override readonly cause: Error) {
    super(`stale keep-alive socket: ${cause.message}`);
  }
}

export function bearer(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** The error code of an envelope response. */
export function errorCode(response: ApiResponse): string | undefined {
  return (response.body as { error?: { code?: string } } | undefined)?.error?.code;
}
