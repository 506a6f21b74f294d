import { cpuMs } from './proc-stats.ts';

export interface WindowReading {
  /** CPU milliseconds by label over the window (processes of a label summed). */
  cpuMs: Record<string, number>;
  /** Operations done over the window, by the caller's counter. */
  count: number;
  seconds: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A window inside a steady run: after `warmupSeconds` (connections made, code compiled), reads the
 * labelled processes' CPU from /proc and the caller's operation counter, waits `seconds` and reads
 * both again. Reading inside the run keeps its start and end (connecting, forking backends, exiting)
 * out of the figure. A process first seen at the end counts from zero.
 */
export async function measureWindow(options: {
  warmupSeconds: number;
  seconds: number;
  processes: () => Promise<Array<{ label: string; pid: number }>>;
  count: () => Promise<number>;
}): Promise<WindowReading> {
  await sleep(options.warmupSeconds * 1000);
  const read = async () => {
    const processes = await options.processes();
    return new Map(await Promise.all(processes.map(async (p) => [p.pid, { label: p.label, ms: await cpuMs(p.pid).catch(() => undefined) }] as const)));
  };
  const before = await read();
  const countBefore = await options.count();
  const started = performance.now();
  await sleep(options.seconds * 1000);
  const countAfter = await options.count();
  const seconds = (performance.now() - started) / 1000;
  const after = await read();
  const used: Record<string, number> = {};
  for (const [pid, { label, ms }] of after) {
    if (ms === undefined) continue;
    used[label] = (used[label] ?? 0) + ms - (before.get(pid)?.ms ?? 0);
  }
  return { cpuMs: used, count: countAfter - countBefore, seconds };
}
