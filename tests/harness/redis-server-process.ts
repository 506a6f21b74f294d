import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** One redis-server (a data node or a sentinel) started by a test harness. */
export interface RedisServerProcess {
  readonly port: number;
  readonly child: ChildProcess;
}

/**
 * Starts `redis-server` with `args` (which make it listen on `port`) and waits until it answers
 * PING; a process exit kills every server still running.
 */
export async function launchRedisServer(port: number, args: string[]): Promise<RedisServerProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8192));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!isRunning(child) || Date.now() > deadline) throw new Error(`redis-server on ${port} did not start:\n${output}`);
    if ((await withRedisNode(port, (redis) => redis.ping()).catch(() => '')) === 'PONG') return { port, child };
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGKILLs a server (no shutdown, no persistence) and resolves once it is gone. */
export async function killRedisServer(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A short-lived connection to one server on loopback that never reconnects, for harness checks. */
export function connectToRedisNode(port: number): Redis {
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, connectTimeout: 5000, commandTimeout: 10_000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  return redis;
}

/** Runs `work` on a connection of {@link connectToRedisNode}, closed afterwards. */
export async function withRedisNode<T>(port: number, work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = connectToRedisNode(port);
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}
