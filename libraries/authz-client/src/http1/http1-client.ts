import { OriginPool } from './origin-pool.ts';
import { PendingCall, type CallResult } from './pending-call.ts';
import { encodeRequest, requestTarget, type RequestTarget } from './request-encoder.ts';
import { ResponseParser } from './response-parser.ts';

export interface Http1ClientOptions {
  /** Open connections per origin (host and port); calls beyond them wait for one. @defaultValue 128 */
  connectionsPerOrigin?: number;
  /** How long an idle keep-alive connection is kept (less when the server advertises less). @defaultValue 30000 */
  idleTimeoutMs?: number;
  /** Largest status line plus header fields accepted. @defaultValue 65536 */
  maxHeadBytes?: number;
  /** Certificate authorities trusted for https, instead of Node's bundled ones (NODE_EXTRA_CA_CERTS applies either way). */
  ca?: string | Buffer;
}

interface Http1Request {
  method: 'GET' | 'POST' | 'HEAD' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** Deadline for the whole call: waiting for a connection, connecting, writing, and reading the whole answer. */
  timeoutMs: number;
  /** A larger answer (declared or received) fails the call. */
  maxResponseBytes: number;
}

const SWEEP_INTERVAL_MS = 1000;

/**
 * A minimal HTTP/1.1 client for small JSON calls: keep-alive pools per origin, one write per request,
 * an incremental response parser. Redirects are not followed and nothing is decompressed (nothing
 * asks for compression).
 */
export class Http1Client {
  private readonly pools = new Map<string, OriginPool>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;
  private readonly maxConnections: number;
  private readonly idleTimeoutMs: number;
  private readonly maxHeadBytes: number;

  constructor(private readonly options: Http1ClientOptions = {}) {
    this.maxConnections = options.connectionsPerOrigin ?? 128;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.maxHeadBytes = options.maxHeadBytes ?? 64 * 1024;
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(SWEEP_INTERVAL_MS, this.idleTimeoutMs))).unref();
  }

  send(url: URL, init: Http1Request): Promise<CallResult> {
    if (this.closed) return Promise.reject(new Error('core transport is closed'));
    let pool: OriginPool;
    let request: Buffer;
    try {
      const target = requestTarget(url);
      request = encodeRequest(init.method, target, init.headers, init.body);
      pool = this.poolFor(target);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const parser = new ResponseParser({ maxHeadBytes: this.maxHeadBytes, maxBodyBytes: init.maxResponseBytes }, init.method === 'HEAD');
    return new Promise((resolve, reject) => {
      pool.dispatch(new PendingCall(request, parser, pool, init.timeoutMs, resolve, reject));
    });
  }

  /** Destroys idle connections; calls on the wire finish or fail; later calls are refused. */
  close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const pool of this.pools.values()) pool.close();
    return Promise.resolve();
  }

  private poolFor(target: RequestTarget): OriginPool {
    const key = target.tls ? `https://${target.host}` : target.host;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      const { tls, hostname, port } = target;
      pool = new OriginPool({ tls, hostname, port, maxConnections: this.maxConnections, idleTimeoutMs: this.idleTimeoutMs, ca: this.options.ca });
      this.pools.set(key, pool);
    }
    return pool;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, pool] of this.pools) {
      pool.sweep(now);
      if (pool.empty) this.pools.delete(key);
    }
  }
}
