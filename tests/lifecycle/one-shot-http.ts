import { request } from 'node:http';
import type { ApiResponse } from '../harness/api-client.ts';

/**
 * How one request ended. Each request has its own TCP connection, so "refused" (the server was no
 * longer listening: it never saw the request) is told apart from "broken" (the connection was up and
 * then reset or cut before a full answer: the server may have taken the request).
 */
export type Outcome<T> =
  | { kind: 'answered'; response: ApiResponse<T> }
  | { kind: 'refused'; error: string }
  | { kind: 'broken'; error: string };

/** Sends one JSON request on a fresh connection (`Connection: close`, no agent) and classifies the outcome. */
export function sendOnce<T>(baseUrl: string, method: string, path: string, headers: Record<string, string>, json?: unknown): Promise<Outcome<T>> {
  const url = new URL(baseUrl);
  const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json), 'utf8');
  return new Promise((resolve) => {
    let connected = false;
    let settled = false;
    const settle = (outcome: Outcome<T>) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        agent: false,
        headers: {
          connection: 'close',
          ...headers,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(payload.length) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => settle({ kind: 'broken', error: err.message }));
        res.on('aborted', () => settle({ kind: 'broken', error: 'response aborted' }));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          const requestId = res.headers['x-request-id'];
          settle({
            kind: 'answered',
            response: { status: res.statusCode ?? 0, headers: res.headers, text, body: body as T, requestId: Array.isArray(requestId) ? requestId[0] : requestId },
          });
        });
      },
    );
    req.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    req.on('error', (err: NodeJS.ErrnoException) => settle(connected ? { kind: 'broken', error: err.code ?? err.message } : { kind: 'refused', error: err.code ?? err.message }));
    req.end(payload);
  });
}
