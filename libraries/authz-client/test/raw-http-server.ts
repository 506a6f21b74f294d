import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A request as the raw server read it off the wire. */
interface RawRequest {
  head: string;
  body: string;
  /** 0 for the first request on its connection, 1 for the next, … */
  indexOnConnection: number;
  /** 0 for the first connection the server accepted, … */
  connection: number;
}

/** Answers one request by writing whatever bytes it likes to the socket (or closing it). */
export type RawHandler = (socket: Socket, request: RawRequest) => void | Promise<void>;

/**
 * A TCP server speaking just enough HTTP/1.1 to read requests (head plus Content-Length body), so a
 * test can answer with malformed, split, slow or truncated bytes that node:http would never write.
 */
export interface RawHttpServer {
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections the peer (the client) closed or reset, or the server destroyed. */
  closedConnections(): number;
  requests: RawRequest[];
  /** Sockets currently open, in accept order. */
  sockets(): Socket[];
  close(): Promise<void>;
}

export async function startRawHttpServer(handler: RawHandler): Promise<RawHttpServer> {
  const requests: RawRequest[] = [];
  const open = new Set<Socket>();
  let accepted = 0;
  let closed = 0;
  const server: Server = createServer((socket) => {
    const connection = accepted++;
    open.add(socket);
    socket.setNoDelay(true);
    socket.on('error', () => {});
    socket.on('close', () => {
      closed++;
      open.delete(socket);
    });
    let buffered = Buffer.alloc(0);
    let indexOnConnection = 0;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const request = { head, body: buffered.subarray(end + 4, end + 4 + length).toString('utf8'), indexOnConnection: indexOnConnection++, connection };
        buffered = buffered.subarray(end + 4 + length);
        requests.push(request);
        void Promise.resolve(handler(socket, request)).catch(() => socket.destroy());
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => accepted,
    closedConnections: () => closed,
    requests,
    sockets: () => [...open],
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes the pieces one by one with a pause between, so each arrives in its own TCP segment. */
export async function writeInPieces(socket: Socket, pieces: Array<string | Buffer>, pauseMs = 5): Promise<void> {
  for (const piece of pieces) {
    if (socket.destroyed) return;
    socket.write(piece);
    await sleep(pauseMs);
  }
}

/** Polls until `condition` holds (socket closes arrive asynchronously). */
export async function eventually(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(5);
  }
}

/** The error a call fails with; throws when the call succeeds. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('call succeeded');
}
