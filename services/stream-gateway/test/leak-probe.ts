import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Active resources of this process by kind (`Timeout`, `TCPSocketWrap`, `TCPServerWrap`, ...). */
export function resourceCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/**
 * The full collector: `global.gc` when mocha runs with `--expose-gc` (the package's .mocharc does);
 * otherwise the flag is set at run time and a fresh context gets its `gc`. Never a silent no-op, so a
 * heap comparison cannot pass just because nothing was collected.
 */
function fullGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Heap in use once only what is reachable is left: two full collections with a macrotask between
 * them, so objects freed by finalizers and weak callbacks of the first are gone by the second.
 */
export async function retainedHeapBytes(): Promise<number> {
  const gc = fullGc();
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return process.memoryUsage().heapUsed;
}

/** Polls `probe` until it holds, or fails naming `what` after `timeoutMs`. */
export async function eventually(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
