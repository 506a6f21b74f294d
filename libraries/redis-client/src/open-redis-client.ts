import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { tuningOf, type RedisConnectionProfile } from './connection-profiles.ts';
import { isClusterTarget, type RedisClient, type RedisTarget } from './redis-target.ts';

/** The connection a caller asks for. */
export interface RedisConnectionRequest {
  /** Who the connection serves; it fixes timeouts, retries, queueing and pipelining. */
  profile: RedisConnectionProfile;
  /** The name the connection shows in Redis's `CLIENT LIST` (see `connectionName`). */
  name: string;
  /** The caller's longest wait for one command; the profile derives its connect (and any command) timeout from it. */
  timeoutMs: number;
}

/** Reconnects back off by 100 ms per attempt, to at most 2 s, and never give up. */
const reconnectDelay = (times: number) => Math.min(times * 100, 2000);

/**
 * Opens an ioredis client to `target` (a `Cluster` for a Cluster target, else a `Redis`, which
 * follows Sentinel's primary when the options name sentinels), tuned by the request's profile,
 * which overrides what the target says about the same settings. Errors are left to the commands
 * that meet them: the client's own `error` events are swallowed, else ioredis would print every
 * reconnect attempt.
 */
export function openRedisClient(target: RedisTarget, request: RedisConnectionRequest): RedisClient {
  const tuning = tuningOf(request.profile, request.timeoutMs);
  const node: RedisOptions = {
    connectionName: request.name,
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
