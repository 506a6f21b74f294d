import { Agent, errors, request } from 'undici';

/** A raw answer from core: its status and body text, not yet interpreted. */
interface CoreHttpResponse {
  status: number;
  text: string;
}

/** The HTTP leg of the core client: one request, its whole answer, within a time limit. */
export interface CoreTransport {
  send(url: URL, init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; timeoutMs: number; maxResponseBytes: number }): Promise<CoreHttpResponse>;
  close(): Promise<void>;
}

export interface CoreTransportOptions {
  /** Open connections per origin; calls beyond them wait for one. @defaultValue 128 */
  connectionsPerOrigin?: number;
  /** How long an idle keep-alive connection is kept (less when the server advertises less). @defaultValue 30000 */
  idleTimeoutMs?: number;
  /** Certificate authorities trusted for https, instead of Node's bundled ones (NODE_EXTRA_CA_CERTS applies either way). */
  ca?: string | Buffer;
}

/**
 * Core's calls on undici: a keep-alive pool per origin, one deadline for the whole call (waiting for
 * a connection, connecting, writing, and reading the whole answer), and an answer larger than
 * `maxResponseBytes` refused, declared or received. Redirects are not followed (the status comes
 * back as is). Both http: and https: are spoken: deployments reach core over https (infra/k8s),
 * development and tests over http.
 *
 * Every call the core client makes is a read (an authorization decision, a mention lookup, the key
 * set), so a call whose connection was closed or reset is sent once more within its deadline: a
 * keep-alive connection the server closed while the request was on its way is a race of the
 * protocol, not an outage. A same-run A/B against the project's own HTTP/1.1 client
 * (docs/benchmarks.md, "Design choices measured") put undici within the noise at saturation, where
 * appends and opens share each core call.
 */
export function createCoreTransport(options: CoreTransportOptions = {}): CoreTransport {
  const dispatcher = new Agent({
    connections: options.connectionsPerOrigin ?? 128,
    keepAliveTimeout: options.idleTimeoutMs ?? 30_000,
    ...(options.ca === undefined ? {} : { connect: { ca: options.ca } }),
  });
  let closed = false;

  async function once(url: URL, init: Parameters<CoreTransport['send']>[1], abort: AbortController): Promise<CoreHttpResponse> {
    // Ends the call with `message`; aborting also drops the connection, whose answer is unread.
    const refuse = (message: string): never => {
      const err = new Error(message);
      abort.abort(err);
      throw err;
    };
    const response = await request(url, {
      method: init.method,
      ...(init.headers ? { headers: init.headers } : {}),
      ...(init.body === undefined ? {} : { body: init.body }),
      signal: abort.signal,
      dispatcher,
    });
    const declared = Number(response.headers['content-length'] ?? 0);
    if (declared > init.maxResponseBytes) refuse(`core answered ${declared} bytes, more than ${init.maxResponseBytes}`);
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of response.body) {
      length += (chunk as Buffer).length;
      if (length > init.maxResponseBytes) refuse(`core's answer grew past ${init.maxResponseBytes} bytes`);
      chunks.push(chunk as Buffer);
    }
    return { status: response.statusCode, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') };
  }

  return {
    async send(url, init) {
      if (closed) throw new Error('the core transport is closed');
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`core URL ${url.protocol} is neither http: nor https:`);
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error(`core did not answer within ${init.timeoutMs} ms`)), init.timeoutMs);
      try {
        try {
          return await once(url, init, abort);
        } catch (err) {
          if (abort.signal.aborted || !connectionLost(err)) throw err;
          return await once(url, init, abort);
        }
      } catch (err) {
        throw abort.signal.aborted ? abort.signal.reason : err;
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await dispatcher.close();
    },
  };
}

/** The connection was closed or reset under the call. */
function connectionLost(err: unknown): boolean {
  if (err instanceof errors.SocketError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}
