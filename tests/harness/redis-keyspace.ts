import { Redis } from 'ioredis';
import { testConfig } from './test-config.ts';
import { testRedisKind } from './test-redis.ts';

/**
 * Deletes every key under `prefix` on the shared Redis. Runs and benches use a fresh prefix each,
 * and without this their streams (a bench leaves hundreds of MB) stay in the machine's Redis.
 */
export async function deleteRedisKeys(prefix: string): Promise<number> {
  // A test Cluster is thrown away whole at the end of the run.
  if (testRedisKind === 'cluster') return 0;
  const redis = new Redis(testConfig.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}
