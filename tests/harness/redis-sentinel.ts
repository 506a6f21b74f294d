import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { killRedisServer, launchRedisServer, withRedisNode, type RedisServerProcess } from './redis-server-process.ts';

export interface RedisSentinelOptions {
  /** The primary group the sentinels watch. @defaultValue 'chat' */
  name?: string;
  /** Replicas of the primary. @defaultValue 0 */
  replicas?: number;
  /** Sentinels; a failover needs a majority of them (the quorum is that majority). @defaultValue 1 */
  sentinels?: number;
  /** How long the primary may be unreachable before the sentinels call it down. @defaultValue 1000 */
  downAfterMs?: number;
}

/**
 * A primary with `replicas` replicas, watched by `sentinels` sentinels (`redis-server --sentinel`),
 * on loopback from Debian's redis-server, no persistence. `start` returns once every replica is in
 * sync and every sentinel knows every replica and every other sentinel, so a failover can happen
 * at once; `killPrimary` SIGKILLs the primary and `waitPromoted` waits for the sentinels to agree on
 * a new one. `stop` kills everything and removes the files (a process exit kills what is left).
 */
export class RedisSentinel {
  private stopped = false;
  /** The primary's index in `dataNodes`: the first node until a promotion. */
  private primaryIndex = 0;

  private constructor(
    private readonly dataNodes: RedisServerProcess[],
    private readonly sentinelNodes: RedisServerProcess[],
    private readonly dir: string,
    readonly name: string,
  ) {}

  private get primary(): RedisServerProcess {
    return this.dataNodes[this.primaryIndex]!;
  }

  static async start(options: RedisSentinelOptions = {}): Promise<RedisSentinel> {
    const name = options.name ?? 'chat';
    const replicas = options.replicas ?? 0;
    const sentinels = options.sentinels ?? 1;
    const dir = mkdtempSync(join(tmpdir(), 'chat-redis-sentinel-'));
    const dataNodes: RedisServerProcess[] = [];
    const sentinelNodes: RedisServerProcess[] = [];
    const group = new RedisSentinel(dataNodes, sentinelNodes, dir, name);
    try {
      const base = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
      const primaryPort = await freePort();
      dataNodes.push(await launchRedisServer(primaryPort, ['--port', String(primaryPort), ...base, '--dbfilename', `dump-${primaryPort}.rdb`]));
      for (let i = 0; i < replicas; i++) {
        const port = await freePort();
        dataNodes.push(await launchRedisServer(port, ['--port', String(port), ...base, '--dbfilename', `dump-${port}.rdb`, '--replicaof', '127.0.0.1', String(primaryPort)]));
      }
      const quorum = Math.floor(sentinels / 2) + 1;
      for (let i = 0; i < sentinels; i++) {
        const port = await freePort();
        const conf = join(dir, `sentinel-${port}.conf`);
        writeFileSync(
          conf,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${dir}`,
            `sentinel monitor ${name} 127.0.0.1 ${primaryPort} ${quorum}`,
            `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
            `sentinel failover-timeout ${name} 10000`,
            '',
          ].join('\n'),
        );
        sentinelNodes.push(await launchRedisServer(port, [conf, '--sentinel']));
      }
      await group.waitSettled(replicas, sentinels);
    } catch (err) {
      await group.stop();
      throw err;
    }
    return group;
  }

  /** The sentinels, as ioredis' `sentinels` option takes them. */
  get sentinels(): { host: string; port: number }[] {
    return this.sentinelNodes.map((s) => ({ host: '127.0.0.1', port: s.port }));
  }

  /** The port of the primary (as of the start, or of the last `waitPromoted`). */
  get primaryPort(): number {
    return this.primary.port;
  }

  /** The environment that points a service at this group: one sentinel in the URL, the others as seeds. */
  env(): Record<string, string> {
    const [first, ...others] = this.sentinelNodes.map((s) => `127.0.0.1:${s.port}`);
    return {
      REDIS_MODE: 'sentinel',
      REDIS_URL: `redis://${first}`,
      ...(others.length > 0 ? { REDIS_SEED_NODES: others.join(',') } : {}),
      REDIS_SENTINEL_NAME: this.name,
    };
  }

  /** SIGKILLs the primary (no shutdown, no persistence: what its replicas had not received is gone). */
  async killPrimary(): Promise<number> {
    await killRedisServer(this.primary.child);
    return this.primary.port;
  }

  /**
   * Waits until every sentinel names the same primary other than the killed one and that node
   * answers as a primary; returns its port.
   */
  async waitPromoted(timeoutMs = 30_000): Promise<number> {
    const killed = this.primary.port;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const named = await Promise.all(this.sentinelNodes.map((s) => withRedisNode(s.port, (r) => r.call('SENTINEL', 'get-master-addr-by-name', this.name)).catch(() => null)));
      const ports = new Set(named.map((reply) => (Array.isArray(reply) ? Number(reply[1]) : 0)));
      const [port] = ports;
      if (ports.size === 1 && port !== undefined && port !== killed && port !== 0) {
        const role = await withRedisNode(port, (r) => r.call('ROLE')).catch(() => null);
        if (Array.isArray(role) && role[0] === 'master') {
          this.primaryIndex = this.dataNodes.findIndex((n) => n.port === port);
          return port;
        }
      }
      if (Date.now() > deadline) throw new Error(`no replica promoted within ${timeoutMs} ms (sentinels name ${[...ports].join(', ')})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all([...this.sentinelNodes, ...this.dataNodes].map((n) => killRedisServer(n.child)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitSettled(replicas: number, sentinels: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    let last = '';
    for (;;) {
      last = await this.settling(replicas, sentinels).catch((err: Error) => err.message);
      if (last === '') return;
      if (Date.now() > deadline) throw new Error(`redis sentinel group not settled within 30 s: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** '' once replicas are in sync and the sentinels know them and each other, else what is missing. */
  private async settling(replicas: number, sentinels: number): Promise<string> {
    for (const replica of this.dataNodes.slice(1)) {
      const info = await withRedisNode(replica.port, (r) => r.info('replication'));
      if (!/master_link_status:up/.test(info)) return `replica ${replica.port} not in sync`;
    }
    for (const sentinel of this.sentinelNodes) {
      const [known, peers] = await withRedisNode(sentinel.port, async (r) => [
        (await r.call('SENTINEL', 'replicas', this.name)) as unknown[],
        (await r.call('SENTINEL', 'sentinels', this.name)) as unknown[],
      ]);
      if (known.length < replicas) return `sentinel ${sentinel.port} knows ${known.length} replicas`;
      if (peers.length < sentinels - 1) return `sentinel ${sentinel.port} knows ${peers.length} other sentinels`;
    }
    return '';
  }
}
