import { request, type IncomingMessage, type ServerResponse } from 'node:http';

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
