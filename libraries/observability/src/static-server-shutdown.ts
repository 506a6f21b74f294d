import { once } from 'node:events';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { AdminServer } from './admin-server.ts';

/**
 * SIGTERM/SIGINT handling of a process that only answers short requests from memory (the ingress's
 * error backend, the viewer's static server): readiness turns false, the public server stops taking
 * connections and finishes in-flight answers, then the admin server closes and the process exits 0.
 * Answers whether the process is draining, for the admin server's `isDraining`.
 */
export function stopOnSignals(input: { server: Server; admin: () => AdminServer | undefined; logger: Pick<Logger, 'info'> }): () => boolean {
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
