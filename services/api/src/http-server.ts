import { once } from 'node:events';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLimitedServer, DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from '@chat/http-server';

export interface RunningHttpServer {
  server: Server;
  port: number;
  /**
   * Stops accepting connections, lets in-flight requests finish for up to `graceMs`, then closes
   * whatever is left. Keep-alive connections are closed as soon as they fall idle.
   */
  shutdown(graceMs: number): Promise<void>;
}

/** Listens with the slow-client limits set (reliability test 13) and resolves once the port is open. */
export async function listen(
  listener: RequestListener,
  port: number,
  host: string,
  limits: HttpServerLimits = DEFAULT_HTTP_SERVER_LIMITS,
  /** Called with the server before it listens (the all-in-one attaches the gateway's stream front). */
  prepare?: (server: Server) => void,
): Promise<RunningHttpServer> {
  const server = createLimitedServer(listener, limits);
  prepare?.(server);
  server.listen(port, host);
  await once(server, 'listening');
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
