import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { canListen } from './free-port.ts';
import { connectToRedisNode, isRunning, killRedisServer, launchRedisServer, type RedisServerProcess } from './redis-server-process.ts';

export interface RedisClusterOptions {
  /** @defaultValue 3 */
  masters?: number;
  /** Replicas per master. @defaultValue 1 */
  replicas?: number;
  /**
   * First port of the block the nodes take (node i listens on basePort + i, its cluster bus on
   * basePort + i + 10000). Unset: the first free block from 17000 (the range the cluster tests own).
   */
  basePort?: number;
  /** How long a master may be unreachable before its replica takes over. @defaultValue 1000 */
  nodeTimeoutMs?: number;
}

/** One redis-server of the cluster. */
export type ClusterNodeProcess = RedisServerProcess;

const CLUSTER_PORT_FLOOR = 17_000;
const CLUSTER_PORT_CEILING = 17_099;
const SLOTS = 16_384;

/**
 * A real Redis Cluster on loopback from Debian's redis-server: `masters` masters with `replicas`
 * replicas each, no persistence, a low node timeout so a killed master is replaced within seconds.
 * `start` returns once every node reports `cluster_state:ok`, agrees on all nodes and every replica's
 * link to its master is up; `stop` kills every node and removes their files (call it in `after`,
 * which mocha runs when tests fail too; a process exit kills what is left).
 */
export class RedisCluster {
  private stopped = false;

  private constructor(
    readonly nodes: ClusterNodeProcess[],
    private readonly dir: string,
    readonly options: Required<Omit<RedisClusterOptions, 'basePort'>>,
  ) {}

  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const settings = { masters: options.masters ?? 3, replicas: options.replicas ?? 1, nodeTimeoutMs: options.nodeTimeoutMs ?? 1000 };
    if (settings.masters < 1 || settings.replicas < 0) throw new RangeError('a cluster needs at least one master');
    const count = settings.masters * (1 + settings.replicas);
    const basePort = options.basePort ?? (await freePortBlock(count));
    const dir = mkdtempSync(join(tmpdir(), 'chat-redis-cluster-'));
    const nodes: ClusterNodeProcess[] = [];
    const cluster = new RedisCluster(nodes, dir, settings);
    try {
      for (let i = 0; i < count; i++) nodes.push(await launchNode(basePort + i, dir, settings.nodeTimeoutMs));
      if (settings.masters >= 3) await cluster.createWithRedisCli();
      else await cluster.assemble();
      await cluster.waitHealthy();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Seed nodes as `host:port`, the form REDIS_SEED_NODES takes. */
  get seedNodes(): string[] {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`);
  }

  /** One node's URL (any node leads a client to the whole cluster). */
  get url(): string {
    return `redis://127.0.0.1:${this.nodes[0]!.port}`;
  }

  /** The environment that points a service at this cluster. */
  env(): Record<string, string> {
    return { REDIS_MODE: 'cluster', REDIS_URL: this.url, REDIS_SEED_NODES: this.seedNodes.join(',') };
  }

  /** The ports of the nodes that are masters now, as a live node sees it. */
  async masterPorts(): Promise<number[]> {
    const rows = await this.clusterNodes();
    return rows.filter((r) => r.flags.includes('master') && !r.flags.includes('fail')).map((r) => r.port);
  }

  /** The port of the master that serves `key` now. */
  async masterOf(key: string): Promise<number> {
    return this.withNode(async (redis) => {
      const slot = Number(await redis.cluster('KEYSLOT', key));
      const ranges = (await redis.cluster('SLOTS')) as unknown as [number, number, [string, number, string]][];
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      if (!range) throw new Error(`slot ${slot} is not served`);
      return Number(range[2][1]);
    });
  }

  /** How many keys matching `pattern` (a SCAN pattern) each live master holds, by port. */
  async keyCountsByMaster(pattern: string): Promise<Map<number, number>> {
    const counts = new Map<number, number>();
    for (const port of await this.masterPorts()) {
      const redis = connectToRedisNode(port);
      try {
        let cursor = '0';
        let count = 0;
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
          cursor = next;
          count += keys.length;
        } while (cursor !== '0');
        counts.set(port, count);
      } finally {
        redis.disconnect();
      }
    }
    return counts;
  }

  /** SIGKILLs one node (no shutdown, no persistence: its data is gone). */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    await killRedisServer(node.child);
  }

  /** Waits until every slot is served by a live master again (after a kill, a replica's promotion). */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = await this.health().catch((err: Error) => err.message);
      if (last === '') return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`redis cluster not healthy within ${timeoutMs} ms: ${last}`);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.nodes.map((n) => killRedisServer(n.child)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** '' when healthy, else what is not. */
  private async health(): Promise<string> {
    const live = this.nodes.filter((n) => isRunning(n.child));
    for (const node of live) {
      const redis = connectToRedisNode(node.port);
      try {
        const info = await redis.cluster('INFO');
        if (!/cluster_state:ok/.test(info)) return `node ${node.port}: ${info.match(/cluster_state:\w+/)?.[0]}`;
        if (!info.includes(`cluster_slots_ok:${SLOTS}`)) return `node ${node.port}: not every slot is ok`;
        const known = Number(/cluster_known_nodes:(\d+)/.exec(info)?.[1]);
        if (known < this.nodes.length) return `node ${node.port} knows ${known} nodes`;
        const replication = await redis.info('replication');
        if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) return `replica ${node.port} not in sync`;
      } finally {
        redis.disconnect();
      }
    }
    const masters = (await this.clusterNodes()).filter((r) => r.flags.includes('master') && !r.flags.includes('fail'));
    if (masters.length !== this.options.masters) return `${masters.length} live masters`;
    for (const master of masters) {
      if (!this.nodes.some((n) => n.port === master.port && isRunning(n.child))) return `master ${master.port} is dead but not failed over`;
    }
    return '';
  }

  private async clusterNodes(): Promise<{ id: string; port: number; flags: string[] }[]> {
    return this.withNode(async (redis) => {
      const text = (await redis.cluster('NODES')) as string;
      return text
        .trim()
        .split('\n')
        .map((line) => {
          const [id, address, flags] = line.split(' ');
          return { id: id!, port: Number(/:(\d+)@/.exec(address!)?.[1]), flags: flags!.split(',') };
        });
    });
  }

  private async withNode<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
    const node = this.nodes.find((n) => isRunning(n.child));
    if (!node) throw new Error('no node is running');
    const redis = connectToRedisNode(node.port);
    try {
      return await work(redis);
    } finally {
      redis.disconnect();
    }
  }

  private async createWithRedisCli(): Promise<void> {
    const args = ['--cluster', 'create', ...this.seedNodes, '--cluster-replicas', String(this.options.replicas), '--cluster-yes'];
    const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`redis-cli --cluster create failed (${code}):\n${output}`);
  }

  /**
   * redis-cli refuses fewer than 3 masters, so smaller clusters are assembled by hand: even slot
   * ranges to the masters, MEET, then each replica follows its master.
   */
  private async assemble(): Promise<void> {
    const { masters } = this.options;
    const masterNodes = this.nodes.slice(0, masters);
    const first = connectToRedisNode(masterNodes[0]!.port);
    try {
      for (const [i, node] of masterNodes.entries()) {
        const redis = connectToRedisNode(node.port);
        try {
          const from = Math.floor((SLOTS * i) / masters);
          const to = Math.floor((SLOTS * (i + 1)) / masters) - 1;
          await redis.call('CLUSTER', 'ADDSLOTSRANGE', from, to);
        } finally {
          redis.disconnect();
        }
      }
      for (const node of this.nodes.slice(1)) await first.cluster('MEET', '127.0.0.1', node.port);
      await this.waitAllKnown();
      for (const [i, node] of this.nodes.slice(masters).entries()) {
        const master = masterNodes[i % masters]!;
        const masterId = await idOf(master.port);
        const redis = connectToRedisNode(node.port);
        try {
          await retry(() => redis.cluster('REPLICATE', masterId));
        } finally {
          redis.disconnect();
        }
      }
    } finally {
      first.disconnect();
    }
  }

  private async waitAllKnown(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (const node of this.nodes) {
      const redis = connectToRedisNode(node.port);
      try {
        while (Number(/cluster_known_nodes:(\d+)/.exec(await redis.cluster('INFO'))?.[1]) < this.nodes.length) {
          if (Date.now() > deadline) throw new Error(`node ${node.port} did not meet the others`);
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        redis.disconnect();
      }
    }
  }
}

/** Starts a cluster; the usual entry point. */
export function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  return RedisCluster.start(options);
}

async function idOf(port: number): Promise<string> {
  const redis = connectToRedisNode(port);
  try {
    return String(await redis.cluster('MYID'));
  } finally {
    redis.disconnect();
  }
}

async function retry<T>(work: () => Promise<T>, attempts = 50): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function launchNode(port: number, parent: string, nodeTimeoutMs: number): Promise<ClusterNodeProcess> {
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--save', '', '--appendonly', 'no',
    '--dir', parent, '--dbfilename', `dump-${port}.rdb`,
    '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
    '--cluster-node-timeout', String(nodeTimeoutMs),
    // A replica takes over however long its link was down: the test kills masters on purpose.
    '--cluster-replica-validity-factor', '0',
  ];
  return launchRedisServer(port, args);
}

/** The first block of `count` ports in 17000–17099 whose node and bus ports (+10000) are all free. */
async function freePortBlock(count: number): Promise<number> {
  for (let base = CLUSTER_PORT_FLOOR; base + count - 1 <= CLUSTER_PORT_CEILING; base += count) {
    let free = true;
    for (let i = 0; i < count && free; i++) free = (await canListen(base + i)) && (await canListen(base + i + 10_000));
    if (free) return base;
  }
  throw new Error(`no block of ${count} free ports in ${CLUSTER_PORT_FLOOR}-${CLUSTER_PORT_CEILING}`);
}
