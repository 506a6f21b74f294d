import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** Ports above the cluster blocks of redis-cluster.ts (17000–17095), in the range the Redis tests own. */
const PRIMARY_PORT = 17_097;
const SENTINEL_PORT = 17_099;

/**
 * A primary watched by one Sentinel (`redis-server --sentinel`) on loopback, for the tests that
 * connect the way a Sentinel deployment does: ask the sentinel for the primary of `name`.
 */
export class RedisSentinel {
  private constructor(
    private readonly children: ChildProcess[],
    private readonly dir: string,
    readonly name: string,
  ) {}

  static async start(name = 'chat'): Promise<RedisSentinel> {
    const dir = mkdtempSync(join(tmpdir(), 'chat-redis-sentinel-'));
    const children: ChildProcess[] = [];
    const sentinel = new RedisSentinel(children, dir, name);
    try {
      children.push(spawn('redis-server', ['--port', String(PRIMARY_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
      await waitPing(PRIMARY_PORT);
      const conf = join(dir, 'sentinel.conf');
      writeFileSync(conf, `port ${SENTINEL_PORT}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor ${name} 127.0.0.1 ${PRIMARY_PORT} 1\n`);
      children.push(spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
      await waitPing(SENTINEL_PORT);
    } catch (err) {
      await sentinel.stop();
      throw err;
    }
    return sentinel;
  }

  /** The sentinels, as ioredis' `sentinels` option takes them. */
  get sentinels(): { host: string; port: number }[] {
    return [{ host: '127.0.0.1', port: SENTINEL_PORT }];
  }

  get primaryPort(): number {
    return PRIMARY_PORT;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function waitPing(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const redis = new Redis({ host: '127.0.0.1', port, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    redis.on('error', () => undefined);
    const pong = await redis.ping().catch(() => '');
    redis.disconnect();
    if (pong === 'PONG') return;
    if (Date.now() > deadline) throw new Error(`redis on ${port} did not answer`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
