import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { testConfig } from '../harness/test-config.ts';
import type { PeerMessage, PeerSettings } from './floor-peer.ts';
import { measureWindow } from './floor-window.ts';
import { pidsOfCommand } from './proc-stats.ts';

const PEER_SCRIPT = fileURLToPath(new URL('./floor-peer.ts', import.meta.url));

/** One forked peer: its pid, the port it listens on (a server) and its running count. */
class Peer {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number | undefined,
  ) {}

  static async start(settings: PeerSettings): Promise<Peer> {
    const child = fork(PEER_SCRIPT, [], { cwd: testConfig.repoRoot, execArgv: ['--import', 'tsx', '--conditions=@chat/source'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const ready = once(child, 'message') as Promise<[PeerMessage]>;
    child.send(settings);
    const [message] = await ready;
    return new Peer(child, message.type === 'ready' ? message.port : undefined);
  }

  get pid(): number {
    return this.child.pid!;
  }

  async count(): Promise<number> {
    const answer = once(this.child, 'message') as Promise<[PeerMessage]>;
    this.child.send({ type: 'count' });
    const [message] = await answer;
    return message.type === 'count' ? message.count : Number.NaN;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

export interface PeerFloor {
  /** CPU µs per operation, all measured processes together. */
  cpuUs: number;
  /** CPU µs per operation by process. */
  byProcess: Record<string, number>;
  perSecond: number;
}

const perOperation = (cpuMs: Record<string, number>, count: number): PeerFloor['byProcess'] =>
  Object.fromEntries(Object.entries(cpuMs).map(([label, ms]) => [label, (ms * 1000) / Math.max(1, count)]));

const sum = (xs: Record<string, number>) => Object.values(xs).reduce((a, b) => a + b, 0);

/**
 * One HTTP request and its answer between two minimal Node processes at saturation: a plain
 * `node:http` server answering 201 with `answerBytes`, and a `node:http` client on a keep-alive
 * agent keeping `concurrency` POSTs of `requestBytes` with the service's request headers in flight.
 * CPU of both per request.
 */
export async function measureHttpFloor(options: {
  requestBytes: number;
  answerBytes: number;
  headers: Record<string, string>;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
}): Promise<PeerFloor> {
  const server = await Peer.start({ role: 'http-server', answerBytes: options.answerBytes });
  const client = await Peer.start({ role: 'http-client', port: server.port!, concurrency: options.concurrency, requestBytes: options.requestBytes, headers: options.headers });
  try {
    const window = await measureWindow({
      ...options,
      processes: async () => [
        { label: 'server', pid: server.pid },
        { label: 'client', pid: client.pid },
      ],
      count: () => server.count(),
    });
    const byProcess = perOperation(window.cpuMs, window.count);
    return { cpuUs: sum(byProcess), byProcess, perSecond: window.count / window.seconds };
  } finally {
    await client.stop();
    await server.stop();
  }
}

/**
 * One event through Redis at saturation: a process keeps `concurrency` XADDs of an `eventBytes`
 * event in flight on one stream (trimmed as it goes), another reads them with a blocking XREAD.
 * CPU of Redis (the whole instance) and both clients per event read.
 */
export async function measureRedisFloor(options: { eventBytes: number; concurrency: number; seconds: number; warmupSeconds: number }): Promise<PeerFloor> {
  const key = `bench-floor-${randomUUID()}`;
  const reader = await Peer.start({ role: 'xread', redisUrl: testConfig.redisUrl, key });
  const writer = await Peer.start({ role: 'xadd', redisUrl: testConfig.redisUrl, key, concurrency: options.concurrency, eventBytes: options.eventBytes });
  try {
    const window = await measureWindow({
      ...options,
      processes: async () => [
        { label: 'xadd client', pid: writer.pid },
        { label: 'xread client', pid: reader.pid },
        ...(await pidsOfCommand('redis-server')).map((pid) => ({ label: 'redis', pid })),
      ],
      count: () => reader.count(),
    });
    const byProcess = perOperation(window.cpuMs, window.count);
    return { cpuUs: sum(byProcess), byProcess, perSecond: window.count / window.seconds };
  } finally {
    await writer.stop();
    await reader.stop();
    const redis = new Redis(testConfig.redisUrl);
    await redis.del(key).finally(() => redis.disconnect());
  }
}
