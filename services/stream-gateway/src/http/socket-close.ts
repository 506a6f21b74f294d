import type { Socket } from 'node:net';

/** Destroys the socket it is called on; one function shared by every socket as a listener. */
export function destroySocket(this: Socket): void {
  this.destroy();
}

/**
 * Ends the socket (after `last`, if given) and closes it fully once what was written has been
 * handed to the kernel, as Node's server closes a connection after a `Connection: close` response
 * (`destroySoon`). Only ending it would leave the connection half-open for as long as the client
 * keeps its side open (the server allows half-open sockets and no timeout covers one after its
 * response), holding a descriptor, a slot under the connection cap and `server.close()`. A client
 * that reads nothing keeps the write from finishing, so the socket is destroyed after `lingerMs`
 * in any case.
 */
export function endAndClose(socket: Socket, lingerMs: number, last?: string | Buffer): void {
  if (socket.destroyed) return;
  if (last === undefined) socket.end();
  else socket.end(last);
  if (socket.writableFinished) {
    socket.destroy();
    return;
  }
  socket.once('finish', destroySocket);
  const linger = setTimeout(() => socket.destroy(), lingerMs).unref();
  socket.once('close', () => clearTimeout(linger));
}
