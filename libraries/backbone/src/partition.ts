/**
 * Stable partitioning of scopes. The same scopeKey always lands in the same partition on every
 * process and every release, which is what keeps per-scope order on a partitioned stream.
 */

/** FNV-1a (32 bit) over the UTF-8 bytes: tiny, stable across runtimes, evenly spread for ids. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export function partitionOf(scopeKey: string, partitions: number): number {
  return fnv1a32(scopeKey) % partitions;
}

/** Zero-padded partition label (`07`), so keys sort and read well. */
export function partitionLabel(partition: number, partitions: number): string {
  const width = Math.max(2, String(partitions - 1).length);
  return String(partition).padStart(width, '0');
}
