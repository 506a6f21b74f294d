import { readFile } from 'node:fs/promises';

/** Resident set size of a process in KiB, from /proc/<pid>/status (VmRSS). */
export async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on every Linux this runs on). */
const USER_HZ = 100;

/** CPU time (user + system) a process has used so far, in milliseconds. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/** CPU use of labelled processes over a window: call `start` then `stop`, get cores used per label. */
export class CpuMeter {
  private before = new Map<string, number>();
  private startedAt = 0;

  constructor(private readonly processes: Array<{ label: string; pid: number }>) {}

  async start(): Promise<void> {
    this.startedAt = performance.now();
    this.before = new Map(await Promise.all(this.processes.map(async (p) => [`${p.label}#${p.pid}`, await cpuMs(p.pid).catch(() => 0)] as const)));
  }

  /** Cores used per label (processes sharing a label are summed), e.g. `{ gateway: 0.92 }`. */
  async stop(): Promise<Record<string, number>> {
    const elapsed = performance.now() - this.startedAt;
    const used: Record<string, number> = {};
    for (const p of this.processes) {
      const now = await cpuMs(p.pid).catch(() => 0);
      used[p.label] = (used[p.label] ?? 0) + (now - (this.before.get(`${p.label}#${p.pid}`) ?? now)) / elapsed;
    }
    return used;
  }
}

/** `gateway 0.95, api 0.40` — cores per label, for a figure's note. */
export function formatCores(used: Record<string, number>): string {
  return Object.entries(used)
    .map(([label, cores]) => `${label} ${cores.toFixed(2)}`)
    .join(', ');
}
