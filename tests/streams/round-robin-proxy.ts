import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP balancer in front of several gateways, as a Service or an ingress is: each new connection
 * goes to the next backend in turn, skipping one that refuses the connection (a dead pod) for the
 * backends after it, and a connection whose backend dies is cut on the client's side too. It
 * counts the connections each backend was given.
 */
export class RoundRobinProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private next = 0;
  readonly accepted: number[];

  constructor(private readonly backends: ReadonlyArray<{ host: string; port: number }>) {
    this.accepted = backends.map(() => 0);
  }

  async start(): Promise<string> {
    const server = createServer((client) => this.forward(client, this.next++ % this.backends.length, 0));
    this.server = server;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return `http://127.0.0.1:${address.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Connects `client` to backend `first + tried`. A refused connection tries the following backend,
   * not the next in the shared turn: under a crowd of connections that turn has moved on, and a
   * retry drawn from it lands on the dead backend again as often as not.
   */
  private forward(client: Socket, first: number, tried: number): void {
    if (tried >= this.backends.length) {
      client.destroy();
      return;
    }
    const index = (first + tried) % this.backends.length;
    const backend = this.backends[index]!;
    client.pause();
    client.on('error', () => undefined);
    const upstream = connect(backend.port, backend.host);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      this.accepted[index]! += 1;
      this.sockets.add(client);
      this.sockets.add(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', () => {
      if (!connected) this.forward(client, first, tried + 1);
    });
    const drop = (): void => {
      if (!connected) return;
      this.sockets.delete(client);
      this.sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', drop);
    client.on('close', drop);
  }
}
