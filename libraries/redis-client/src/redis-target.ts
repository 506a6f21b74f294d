import type { Cluster, Redis, RedisOptions } from 'ioredis';

/** A Redis Cluster: seed nodes (any one leads to the rest) and the options of every node's connection. */
export interface RedisClusterTarget {
  clusterNodes: ReadonlyArray<{ host: string; port: number }>;
  /** Credentials, TLS and the like, for every node; `keyPrefix` is ignored. */
  nodeOptions?: RedisOptions;
}

/**
 * Where to find Redis: a `redis://` URL, ioredis options (a single node, or Sentinel through
 * `sentinels` and `name`; their `keyPrefix` is ignored, keys carry their own prefix), or a Cluster.
 */
export type RedisTarget = string | RedisOptions | RedisClusterTarget;

/** A connection to a single node (or Sentinel's current primary) or to a Cluster. */
export type RedisClient = Redis | Cluster;

export function isClusterTarget(target: RedisTarget): target is RedisClusterTarget {
  return typeof target === 'object' && 'clusterNodes' in target;
}

/** Redis's validated settings, as a service's configuration holds them (`RedisConfig` in `@chat/service-config`). */
export interface RedisSettings {
  /** undefined: no Redis. */
  url: string | undefined;
  /** @defaultValue 'single' */
  mode?: 'single' | 'cluster' | 'sentinel';
  /** Further Cluster nodes (`cluster`) or sentinels (`sentinel`) besides the one `url` names, as `host:port`. */
  seedNodes?: readonly string[];
  /** The primary group Sentinel watches. @defaultValue 'mymaster' */
  sentinelName?: string;
}

/**
 * What the backbone and the stream leases connect to, from the validated Redis settings: the URL
 * itself for one node; for a Cluster, the URL's node and the seed nodes, every node with the URL's
 * credentials and TLS; for Sentinel, the URL's host and the seed nodes as sentinels, the URL's
 * credentials and database for the primary they name. undefined: no Redis.
 */
export function redisTargetOf(settings: RedisSettings): RedisTarget | undefined {
  if (settings.url === undefined) return undefined;
  const mode = settings.mode ?? 'single';
  if (mode === 'single') return settings.url;
  const url = new URL(settings.url);
  const nodes = [{ host: url.hostname, port: Number(url.port || 6379) }, ...(settings.seedNodes ?? []).map(hostPort)];
  const credentials = {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  if (mode === 'cluster') return { clusterNodes: nodes, nodeOptions: credentials };
  const db = Number(url.pathname.slice(1) || 0);
  return { sentinels: nodes, name: settings.sentinelName ?? 'mymaster', db, ...credentials };
}

function hostPort(value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  return { host: value.slice(0, colon), port: Number(value.slice(colon + 1)) };
}
