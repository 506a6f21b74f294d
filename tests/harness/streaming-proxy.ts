import { once } from 'node:events';
import { request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * Forwards one request to `target` and streams the answer back as it arrives (event streams
 * included), so a test page served from its own origin reaches the service as same-origin requests.
 * Either side closing closes the other.
 */
export function proxyRequest(req: IncomingMessage, res: ServerResponse, target: URL): void {
  const upstream = request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent: false },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res);
      answer.on('aborted', () => res.destroy());
      answer.on('error', () => res.destroy());
    },
  );
  upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

/** Listens on `port` of 127.0.0.1 (0: a free one) and answers the server's base URL. */
export async function listenOnLoopback(server: Server, port = 0): Promise<string> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

/** Closes the server and every connection it still holds (open event streams included). */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
