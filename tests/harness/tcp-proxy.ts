import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy to cut a dependency off and bring it back: `cut()` resets every open connection and
 * refuses new ones (the port stops listening), `restore()` listens on the same port again.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private listenPort = 0;

  constructor(
    private readonly target: { host: string; port: number },
  ) {}

  get port(): number {
    return this.listenPort;
  }

  async start(): Promise<number> {
    await this.listen(0);
    return this.listenPort;
  }

  /** Resets every open connection and stops accepting. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restore(): Promise<void> {
    if (!this.server) await this.listen(this.listenPort);
  }

  async close(): Promise<void> {
    await this.cut();
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      this.sockets.add(client);
      this.sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    this.listenPort = address.port;
    this.server = server;
  }
}
