import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { RoutePipeline } from '@chat/http-kit';
import { readFirstRequest } from './first-request.ts';
import { RawStreamResponse } from './raw-stream-response.ts';
import type { PlainGetHead } from './request-head.ts';
import { destroySocket, endAndClose } from './socket-close.ts';

/** What Node's server answers a client whose head is late. */
const REQUEST_TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

export interface StreamFrontOptions {
  /** The process's pipeline: the front serves its stream routes itself, through it; anything else goes to the server's own handling. */
  pipeline: RoutePipeline;
  /** The first request's head must arrive within this time, or the client gets 408 and the connection closes, as from Node's server. */
  headersTimeoutMs: number;
  /** Largest head it reads itself (Node's default `maxHeaderSize`). @defaultValue 16384 */
  maxHeadBytes?: number;
  /**
   * After a response it sent itself (408, an error, the end of a stream), how long a connection
   * whose client does not take the bytes is kept before it is destroyed.
   * @defaultValue the server's `keepAliveTimeout`
   */
  lingerMs?: number;
}

/**
 * The gateway's own front for stream GETs, in front of Node's HTTP server on the same port. It
 * reads the first request of each connection; a plain HTTP/1.1 GET of a stream route (see
 * request-head.ts) is served on the socket directly, through the same pipeline, route and session as
 * through Node's server, and the connection is the stream's alone. Everything else (another method
 * or path, a request Node would have to settle) goes to Node's
 * server with the bytes read so far put back, as if it had read them itself. A first head that does
 * not arrive within `headersTimeoutMs` gets the 408 Node's server would send.
 *
 * A socket the front keeps (all of them until one is handed over) has an `'error'` listener for its
 * whole life: Node's connection handling, which would add one, never runs for it, and a reset
 * arriving on a socket without one is an unhandled `'error'` that ends the process. Whatever it
 * answers itself closes the connection fully, as Node's server does after `Connection: close`.
 *
 * Why: an open stream is idle almost all its life, and through Node's server each one keeps a
 * request, a response and an HTTP parser with its native state, a few KiB a stream; this way it
 * keeps a socket and the session.
 */
export function attachStreamFront(server: Server, options: StreamFrontOptions): void {
  const maxHeadBytes = options.maxHeadBytes ?? 16 * 1024;
  const lingerMs = (): number => options.lingerMs ?? server.keepAliveTimeout;
  // Node's own connection handling, taken off the event and called for the sockets handed over.
  const nodeListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const handOver = (socket: Socket, read: Buffer | undefined): void => {
    if (read && read.length > 0) socket.unshift(read);
    for (const listener of nodeListeners) listener.call(server, socket);
    // Node's handling has its own listener from here, and answers errors its own way.
    socket.off('error', destroySocket);
  };
  server.on('connection', (socket: Socket) => {
    socket.on('error', destroySocket);
    let read: Buffer | undefined;
    const timer = setTimeout(() => finish(() => endAndClose(socket, lingerMs(), REQUEST_TIMEOUT)), options.headersTimeoutMs);
    const onData = (chunk: Buffer): void => {
      read = read ? Buffer.concat([read, chunk]) : chunk;
      const first = readFirstRequest(read, options.pipeline.isStreamRoute, maxHeadBytes);
      if (first.kind === 'incomplete') return;
      const bytes = read;
      if (first.kind === 'hand-over') finish(() => handOver(socket, bytes));
      else finish(() => serve(socket, first.head));
    };
    const onEnd = (): void => finish(() => socket.destroy());
    // A socket destroyed by an error needs no deadline any more.
    const onClose = (): void => finish(() => undefined);
    function finish(next: () => void): void {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onClose);
      next();
    }
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onClose);
  });

  function serve(socket: Socket, head: PlainGetHead): void {
    // The stream is read by nothing from here on: a client sending more gets no answer to it. A
    // client that half-closes is gone, as Node's server takes it (it aborts the request).
    socket.once('end', destroySocket);
    socket.setNoDelay(true);
    const req = { method: 'GET', url: head.target, headers: head.headers, rawHeaders: [] as string[], httpVersion: '1.1', socket };
    const res = new RawStreamResponse(socket, req, lingerMs());
    options.pipeline.listener(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  }
}
