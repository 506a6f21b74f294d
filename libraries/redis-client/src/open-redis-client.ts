import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { isClusterTarget, type RedisClient, type RedisTarget } from './redis-target.ts';

/** How a connection behaves when Redis is slow or away; each user of Redis chooses its own. */
export interface RedisClientTuning {
  /** The name the connection shows in Redis's `CLIENT LIST`. */
  connectionName: string;
  /** Longest wait to connect to a node (and, on a Cluster, to read the slot map). */
  connectTimeoutMs: number;
  /**
   * Longest wait for one command's reply. Unset where the caller races every command against a
   * deadline of its own (`withDeadline`): blocking reads, and callers that spare the second timer.
   */
  commandTimeoutMs?: number;
  /** Reconnect attempts a command waits through before it fails (ioredis `maxRetriesPerRequest`). */
  maxRetriesPerRequest: number;
  /** false: a command in flight when the connection dropped fails instead of being sent again. @defaultValue true */
  resendAfterReconnect?: boolean;
  /** Commands issued while (re)connecting wait for the connection instead of failing at once. */
  offlineQueue: boolean;
  /** Commands issued in one event-loop turn leave in one write per node. @defaultValue false */
  autoPipelining?: boolean;
  /** Cluster: how often the slot map is re-read when nothing (MOVED, a lost node) signalled a change. */
  slotsRefreshIntervalMs: number;
}

/** Reconnects back off by 100 ms per attempt, to at most 2 s, and never give up. */
const reconnectDelay = (times: number) => Math.min(times * 100, 2000);

/**
 * Opens an ioredis client to `target` (a `Cluster` for a Cluster target, else a `Redis`, which
 * follows Sentinel's primary when the options name sentinels) with `tuning`, which overrides what
 * the target says about the same settings. Errors are left to the commands that meet them: the
 * client's own `error` events are swallowed, else ioredis would print every reconnect attempt.
 */
export function openRedisClient(target: RedisTarget, tuning: RedisClientTuning): RedisClient {
  const node: RedisOptions = {
    connectionName: tuning.connectionName,
    connectTimeout: tuning.connectTimeoutMs,
    maxRetriesPerRequest: tuning.maxRetriesPerRequest,
    ...(tuning.resendAfterReconnect === false ? { autoResendUnfulfilledCommands: false } : {}),
    ...(tuning.commandTimeoutMs === undefined ? {} : { commandTimeout: tuning.commandTimeoutMs }),
  };
  const client = { enableOfflineQueue: tuning.offlineQueue, ...(tuning.autoPipelining ? { enableAutoPipelining: true } : {}) };
  let redis: RedisClient;
  if (isClusterTarget(target)) {
    redis = new Cluster([...target.clusterNodes], {
      ...client,
      redisOptions: { ...target.nodeOptions, keyPrefix: undefined, ...node },
      clusterRetryStrategy: reconnectDelay,
      slotsRefreshTimeout: tuning.connectTimeoutMs,
      slotsRefreshInterval: tuning.slotsRefreshIntervalMs,
    });
  } else {
    const single: RedisOptions = { ...node, ...client, retryStrategy: reconnectDelay };
    redis = typeof target === 'string' ? new Redis(target, single) : new Redis({ ...target, keyPrefix: undefined, ...single });
  }
  redis.on('error', () => undefined);
  return redis;
}
