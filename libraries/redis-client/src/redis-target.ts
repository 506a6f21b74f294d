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
