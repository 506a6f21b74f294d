export { isClusterTarget, type RedisClient, type RedisClusterTarget, type RedisTarget } from './redis-target.ts';
export { openRedisClient, type RedisClientTuning } from './open-redis-client.ts';
export { withDeadline } from './with-deadline.ts';
