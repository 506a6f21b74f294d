import { Http1Client, type Http1ClientOptions } from './http1/http1-client.ts';

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

/**
 * Core is called on every chat request, so the call path is a small HTTP/1.1 client on plain
 * `net`/`tls` sockets (keep-alive pool per origin, one write per request, an incremental response
 * parser, one timer per call) rather than undici, whose per-call machinery (request handler, abort
 * signal, header objects, body stream and its async iteration) showed in API profiles at 500
 * appends/s. Client CPU per authorize call against dev-core (tests/bench/core-transport-cost.ts):
 * about 24 µs sequential and 25 µs with 16 concurrent, against 80 µs and 60 µs for undici's
 * `request` on a keep-alive Agent; what is left is mostly the socket's write and read.
 * Redirects are not followed (the status comes back as is) and an answer larger than
 * `maxResponseBytes` is an error. Both http: and https: are spoken: deployments reach core over
 * https (infra/k8s), development and tests over http.
 */
export function createCoreTransport(options: Http1ClientOptions = {}): CoreTransport {
  return new Http1Client(options);
}
