import { Redis } from 'ioredis';
import type { RedisCluster } from '../harness/redis-cluster.ts';
import { cpuMs } from './proc-stats.ts';

/** One master's counters at a moment: commands by name, bytes sent to clients, CPU used so far. */
export interface ShardReading {
  port: number;
  /** `INFO commandstats` calls, by lower-case command name (`xadd`, `evalsha`, …). */
  calls: Record<string, number>;
  /** `INFO stats` total_net_output_bytes. */
  netOutputBytes: number;
  cpuMs: number;
}

/** What one master did between two readings. */
export interface ShardUsage {
  port: number;
  calls: Record<string, number>;
  netOutputBytes: number;
  /** Cores used over the interval (1 = one core busy). */
  cores: number;
}

/**
 * The masters of a Redis Cluster seen one by one: per-master counters (`INFO`, `/proc` CPU), which
 * master serves a key (`CLUSTER KEYSLOT` + `CLUSTER SLOTS`) and which keys each master holds
 * (`SCAN`). A Cluster client would hide the shards; these are plain connections to each master.
 */
export class RedisShards {
  private constructor(
    private readonly masters: Array<{ port: number; pid: number; redis: Redis }>,
  ) {}

  static async open(cluster: RedisCluster): Promise<RedisShards> {
    const ports = (await cluster.masterPorts()).sort((a, b) => a - b);
    return new RedisShards(
      ports.map((port) => {
        const node = cluster.nodes.find((n) => n.port === port);
        if (node?.child.pid === undefined) throw new Error(`no process for master ${port}`);
        const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, lazyConnect: false });
        redis.on('error', () => undefined);
        return { port, pid: node.child.pid, redis };
      }),
    );
  }

  get ports(): number[] {
    return this.masters.map((m) => m.port);
  }

  async read(): Promise<ShardReading[]> {
    return Promise.all(
      this.masters.map(async ({ port, pid, redis }) => {
        const [commandstats, stats, cpu] = await Promise.all([redis.info('commandstats'), redis.info('stats'), cpuMs(pid)]);
        const calls: Record<string, number> = {};
        for (const match of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
        return { port, calls, netOutputBytes: Number(/^total_net_output_bytes:(\d+)/m.exec(stats)?.[1] ?? 0), cpuMs: cpu };
      }),
    );
  }

  /** Each master's work between two readings taken `seconds` apart. */
  static usage(before: ShardReading[], after: ShardReading[], seconds: number): ShardUsage[] {
    return after.map((end) => {
      const start = before.find((b) => b.port === end.port)!;
      const calls: Record<string, number> = {};
      for (const [name, n] of Object.entries(end.calls)) if (n > (start.calls[name] ?? 0)) calls[name] = n - (start.calls[name] ?? 0);
      return { port: end.port, calls, netOutputBytes: end.netOutputBytes - start.netOutputBytes, cores: (end.cpuMs - start.cpuMs) / 1000 / seconds };
    });
  }

  /** The port of the master serving each key, as the cluster's slot table says now. */
  async masterOfKeys(keys: readonly string[]): Promise<Map<string, number>> {
    const redis = this.masters[0]!.redis;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.cluster('KEYSLOT', key);
    const slots = ((await pipeline.exec()) ?? []).map(([err, slot]) => {
      if (err) throw err;
      return Number(slot);
    });
    const ranges = (await redis.cluster('SLOTS')) as unknown as Array<[number, number, [string, number]]>;
    const placed = new Map<string, number>();
    keys.forEach((key, i) => {
      const range = ranges.find(([from, to]) => slots[i]! >= from && slots[i]! <= to);
      if (!range) throw new Error(`slot ${slots[i]} of ${key} is not served`);
      placed.set(key, Number(range[2][1]));
    });
    return placed;
  }

  /** Every key matching `pattern` (a SCAN pattern) on each master, by port. */
  async keysByMaster(pattern: string): Promise<Map<number, string[]>> {
    const found = new Map<number, string[]>();
    for (const { port, redis } of this.masters) {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      found.set(port, keys);
    }
    return found;
  }

  close(): void {
    for (const { redis } of this.masters) redis.disconnect();
  }
}
