import { startRedisCluster, type RedisCluster } from './redis-cluster.ts';
import { testConfig } from './test-config.ts';

/**
 * The Redis the suites' services run on: the shared one (TEST_REDIS_URL), or with
 * CHAT_TEST_REDIS=cluster a Redis Cluster of 3 masters and 3 replicas, started on first use and
 * stopped by the root hook, so the stream, inbox and rate-limit suites run unchanged on a Cluster.
 */
export const testRedisKind: 'single' | 'cluster' = process.env.CHAT_TEST_REDIS === 'cluster' ? 'cluster' : 'single';
if (!['', undefined, 'single', 'cluster'].includes(process.env.CHAT_TEST_REDIS)) {
  throw new Error(`CHAT_TEST_REDIS must be single or cluster, got ${JSON.stringify(process.env.CHAT_TEST_REDIS)}`);
}

let shared: Promise<RedisCluster> | undefined;

/** REDIS_* variables of a service on the test Redis (REDIS_KEY_PREFIX is the caller's). */
export async function testRedisEnv(): Promise<Record<string, string>> {
  if (testRedisKind === 'single') return { REDIS_URL: testConfig.redisUrl };
  shared ??= startRedisCluster({ masters: 3, replicas: 1 });
  return (await shared).env();
}

/** Stops the shared cluster, if one was started. */
export async function stopTestRedis(): Promise<void> {
  const cluster = shared;
  shared = undefined;
  await (await cluster?.catch(() => undefined))?.stop();
}
