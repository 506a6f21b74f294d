import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the service that, while armed, lets a request through to the service but
 * resets the client's connection as soon as the answer starts: the service did the work, the client
 * never hears of it. That is the failure an append's Idempotency-Key exists for.
 */
export class ResponseCuttingProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** How many answers to cut from now on. */
  cutsLeft = 0;
  /** Answers cut so far. */
  cut = 0;
  url = '';

  constructor(private readonly target: URL) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      this.sockets.add(client).add(upstream);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => {
        if (this.cutsLeft > 0) {
          this.cutsLeft -= 1;
          this.cut += 1;
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    this.url = `http://127.0.0.1:${address.port}`;
    this.server = server;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
