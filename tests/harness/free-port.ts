import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports are drawn from below the kernel's ephemeral range. A port the OS handed out for `listen(0)`
 * is ephemeral too, and between our check and the child's own `listen` an outgoing connection
 * (to PostgreSQL, Redis, a peer) could be given the same port, which then fails with EADDRINUSE.
 * Outgoing connections never take a port below the range, so a port checked free there stays free
 * unless another test process picks it, which the random draw and the bind check make unlikely.
 */
const LOWEST_PORT = 10_000;
const handedOut = new Set<number>();

function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const start = Number(low);
    if (Number.isInteger(start) && start > LOWEST_PORT + 1_000) return start;
  } catch {
    // Not Linux: fall through to the IANA dynamic range.
  }
  return 49_152;
}

const highestPort = ephemeralRangeStart() - 1;

export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A TCP port on 127.0.0.1 that is free now, outside the ephemeral range, not handed out before. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (highestPort - LOWEST_PORT + 1));
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port found between ${LOWEST_PORT} and ${highestPort}`);
}
