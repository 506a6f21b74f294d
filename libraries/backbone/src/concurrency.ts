/**
 * Runs `work` over `items` with at most `limit` runs in flight, and resolves when all have settled.
 * `work` is expected to handle its own errors; a rejection stops nothing else but is rethrown at the end.
 */
async function forEachConcurrently<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        failure ??= err;
      }
    }
  });
  await Promise.all(lanes);
  if (failure !== undefined) throw failure;
}

/**
 * Like `forEachConcurrently`, but items with the same key run one after another, in their order;
 * only different keys run side by side. Keeps per-scope order while scopes proceed in parallel.
 */
export async function forEachByKey<T>(items: readonly T[], limit: number, keyOf: (item: T) => string, work: (item: T) => Promise<void>): Promise<void> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  await forEachConcurrently([...groups.values()], limit, async (group) => {
    for (const item of group) await work(item);
  });
}
