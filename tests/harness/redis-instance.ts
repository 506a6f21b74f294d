import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { freePort } from './free-port.ts';

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A private, throw-away redis-server on its own port (no persistence), for tests that pause, kill
 * and restart Redis. Never the shared Redis on 6379, which other test files use.
 */
export class RedisInstance {
  private child: ChildProcess | undefined;
  private output = '';

  private constructor(readonly port: number) {}

  /** Starts one on a free port and waits until it answers PING. */
  static async start(): Promise<RedisInstance> {
    const instance = new RedisInstance(await freePort());
    await instance.launch();
    return instance;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** SIGSTOP: the process stays, its sockets stay open, nothing answers. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGKILL: every key is gone (no persistence). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }

  /** A new, empty server on the same port. */
  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  async stop(): Promise<void> {
    await this.kill();
  }

  private async launch(): Promise<void> {
    this.output = '';
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    running.add(child);
    child.once('exit', () => running.delete(child));
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString('utf8')).slice(-8192));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const deadline = Date.now() + 10_000;
    while (!(await this.ping())) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not start:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect(this.port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
  }
}
