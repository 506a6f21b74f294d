import { once } from 'node:events';
import type { Server } from 'node:http';

/** The admin server as shutdown sees it: closed last, once the public server has finished. */
export interface ClosableAdminServer {
  close(): Promise<void>;
}

/** Where shutdown says it started (a pino logger fits). */
export interface ShutdownLogger {
  info(obj: object, msg: string): void;
}

/**
 * SIGTERM/SIGINT handling of a process that only answers short requests from memory (the ingress's
 * error backend, the viewer's static server): readiness turns false, the public server stops taking
 * connections and finishes in-flight answers, then the admin server closes and the process exits 0.
 * `admin` is read when the signal arrives, so the handler can be installed before the admin server
 * is up. Answers whether the process is draining, for the admin server's `isDraining`.
 */
export function stopOnSignals(input: { server: Server; admin: () => ClosableAdminServer | undefined; logger: ShutdownLogger }): () => boolean {
  let draining = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (draining) return;
    draining = true;
    input.logger.info({ signal }, 'stopping');
    input.server.close();
    input.server.closeIdleConnections();
    await once(input.server, 'close');
    await input.admin()?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  return () => draining;
}
