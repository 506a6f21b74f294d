import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningHttpServer {
  server: Server;
  port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish for up to `graceMs`, then closes
   * whatever is left. Keep-alive connections are closed as soon as they fall idle.
   */
  shutdown(graceMs: number): Promise<void>;
}

/** Listens and resolves once the port is open. */
export async function listen(listener: RequestListener, port: number, host: string): Promise<RunningHttpServer> {
  const server = createServer(listener).listen(port, host);
  await once(server, 'listening');
  // Slow clients must not hold a socket forever (reliability test 13); streams opt out per request.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    async shutdown(graceMs) {
      const closed = once(server, 'close');
      server.close();
      const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
      const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
      try {
        await closed;
      } finally {
        clearInterval(idleSweep);
        clearTimeout(deadline);
      }
    },
  };
}
