import { Agent, request, type Dispatcher } from 'undici';

/** A raw answer from core: its status and body text, not yet interpreted. */
export interface CoreHttpResponse {
  status: number;
  text: string;
}

/** The HTTP leg of the core client: one request, its whole answer, within a time limit. */
export interface CoreTransport {
  send(url: URL, init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; timeoutMs: number; maxResponseBytes: number }): Promise<CoreHttpResponse>;
  close(): Promise<void>;
}

/**
 * Core is called on every request, so the call path is undici's `request` on a keep-alive agent
 * rather than `fetch`: fetch's WHATWG request/response/stream objects were ~15 % of an API process's
 * CPU. Redirects are not followed (the status comes back as is) and an answer larger than
 * `maxResponseBytes` is an error.
 */
export function createCoreTransport(options: { connectionsPerOrigin?: number } = {}): CoreTransport {
  const dispatcher: Dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: options.connectionsPerOrigin ?? 128 });
  return {
    async send(url, init) {
      // A timer cleared once the answer is read, not AbortSignal.timeout: that one fires (and builds
      // a DOMException and an abort event) for every call, long after the call is done.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error(`core did not answer within ${init.timeoutMs} ms`)), init.timeoutMs);
      try {
        const response = await request(url, {
          method: init.method,
          headers: init.headers,
          body: init.body,
          signal: abort.signal,
          dispatcher,
        });
        const declared = Number(response.headers['content-length'] ?? 0);
        if (declared > init.maxResponseBytes) {
          response.body.destroy();
          throw new Error(`core answer of ${declared} bytes`);
        }
        const chunks: Buffer[] = [];
        let length = 0;
        for await (const chunk of response.body) {
          length += (chunk as Buffer).length;
          if (length > init.maxResponseBytes) {
            response.body.destroy();
            throw new Error(`core answer over ${init.maxResponseBytes} bytes`);
          }
          chunks.push(chunk as Buffer);
        }
        return { status: response.statusCode, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') };
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => dispatcher.close(),
  };
}
