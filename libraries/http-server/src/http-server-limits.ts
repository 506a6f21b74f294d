import { createServer, type RequestListener, type Server } from 'node:http';

/** Timeouts and the connection cap of an HTTP server; see each field. */
export interface HttpServerLimits {
  /** The request's headers must arrive within this time, or the socket is closed (408). */
  headersTimeoutMs: number;
  /**
   * The whole request (headers and body) must arrive within this time. Node stops timing a request
   * once it is fully received, so a long-lived response (an event stream) is not cut by it.
   */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: number;
  /** Connections open at once; Node closes sockets beyond it as they arrive. */
  maxConnections: number;
}

/** Limits for servers nobody configured (tests, the admin port): the services' defaults. */
export const DEFAULT_HTTP_SERVER_LIMITS: Readonly<HttpServerLimits> = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 20_000,
};

/**
 * An HTTP server with its slow-client limits set, so a client that trickles its headers or its body
 * cannot hold a socket (and its memory) for long. Node checks those deadlines on an interval that
 * defaults to 30 s; it is set here to a fraction of the shortest deadline, so they hold to within it.
 */
export function createLimitedServer(listener: RequestListener, limits: HttpServerLimits = DEFAULT_HTTP_SERVER_LIMITS): Server {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  const server = createServer({ connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(shortest / 4))) }, listener);
  // Node requires headersTimeout <= requestTimeout.
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  return server;
}
