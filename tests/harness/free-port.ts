import { createServer } from 'node:net';

/**
 * A TCP port that was free a moment ago on 127.0.0.1. The OS hands out ephemeral ports in rotation,
 * so a port released here is not reused by the next caller straight away.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('no port assigned'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
