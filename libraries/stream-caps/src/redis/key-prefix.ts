/**
 * Checks a key prefix: braces in it would become the Cluster hash tag and put every key of the
 * service in one slot, so they are refused at start.
 */
export function checkKeyPrefix(prefix: string): string {
  if (prefix.length === 0 || /[{}]/.test(prefix)) {
    throw new RangeError(`Redis key prefix must be non-empty and free of braces, got "${prefix}"`);
  }
  return prefix;
}
