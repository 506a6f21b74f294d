import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@chat/redis-client';

/**
 * The hash tag Redis Cluster places a key by (the part between the first `{` and the next `}` when
 * not empty, else the whole key): keys with the same tag share a slot.
 */
function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/**
 * Runs one command per item, each on the key `keyOf` names: one pipeline on a single node; on a
 * Cluster one pipeline per hash tag, because ioredis refuses a pipeline whose keys live on different
 * nodes (and slots move between nodes). The commands of one tag keep their order; the replies come
 * back in the order of `items`.
 */
export async function execPerSlot<T>(
  redis: RedisClient,
  items: readonly T[],
  keyOf: (item: T) => string,
  queue: (pipeline: ChainableCommander, item: T) => void,
): Promise<Array<[Error | null, unknown]>> {
  const groups = new Map<string, number[]>();
  for (const [index, item] of items.entries()) {
    const tag = redis.isCluster ? hashTagOf(keyOf(item)) : '';
    const indices = groups.get(tag);
    if (indices) indices.push(index);
    else groups.set(tag, [index]);
  }
  const replies: Array<[Error | null, unknown]> = new Array(items.length);
  await Promise.all(
    [...groups.values()].map(async (indices) => {
      const pipeline = redis.pipeline();
      for (const index of indices) queue(pipeline, items[index] as T);
      const results = await pipeline.exec();
      if (!results) throw new Error('pipeline aborted');
      for (const [n, index] of indices.entries()) replies[index] = results[n] ?? [new Error('missing reply'), null];
    }),
  );
  return replies;
}
