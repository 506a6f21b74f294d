export { isClusterTarget, redisTargetOf, type RedisClient, type RedisClusterTarget, type RedisSettings, type RedisTarget } from './redis-target.ts';
export type { RedisConnectionProfile } from './connection-profiles.ts';
export { openRedisClient, type RedisConnectionRequest } from './open-redis-client.ts';
export { connectionName } from './connection-name.ts';
export { settleWithin, withDeadline, withDeadlineOrReconnect } from './with-deadline.ts';
export { waitReady } from './wait-ready.ts';
