import type { Server } from 'node:net';

/**
 * A readiness check of the server's own room: it rejects while the server holds `limit`
 * connections or more. Past its `maxConnections` Node closes each new socket as it arrives, so a
 * pod near its cap should be sent no new clients; the ones it holds keep their streams.
 */
export function connectionRoom(server: Server, limit: number): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      server.getConnections((err, count) => {
        if (err) reject(err);
        else if (count >= limit) reject(new Error(`${count} connections open, at or above ${limit}`));
        else resolve();
      });
    });
}
