import { readdir, readFile } from 'node:fs/promises';

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

/**
 * Pids of every process whose command name (`/proc/<pid>/comm`) is `command`: PostgreSQL's server
 * and backends are all `postgres`, Redis is `redis-server`.
 */
export async function pidsOfCommand(command: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.trim() === command) pids.push(Number(entry));
  }
  return pids;
}

/**
 * CPU milliseconds used over a window by labelled processes, where a label's processes may come and
 * go (PostgreSQL forks a backend per connection): the pids of each label are listed again at the end,
 * and a pid first seen then counts from zero.
 */
export class WindowCpu {
  private before = new Map<number, number>();
  private selfBefore = process.cpuUsage();

  constructor(private readonly labels: () => Promise<Array<{ label: string; pid: number }>>) {}

  async start(): Promise<void> {
    const processes = await this.labels();
    this.before = new Map(await Promise.all(processes.map(async (p) => [p.pid, await cpuMs(p.pid).catch(() => 0)] as const)));
    this.selfBefore = process.cpuUsage();
  }

  /** Milliseconds per label; `load client` is this process (the bench and its append clients). */
  async stop(): Promise<Record<string, number>> {
    const self = process.cpuUsage(this.selfBefore);
    const used: Record<string, number> = {};
    for (const p of await this.labels()) {
      const now = await cpuMs(p.pid).catch(() => undefined);
      if (now === undefined) continue;
      used[p.label] = (used[p.label] ?? 0) + now - (this.before.get(p.pid) ?? 0);
    }
    used['load client'] = (self.user + self.system) / 1000;
    return used;
  }
}

/**
 * PostgreSQL's pids that serve `database`: its backends and the server's shared processes
 * (postmaster, WAL writer, checkpointer, background writer), not other databases' backends.
 */
export async function postgresPidsOf(database: string): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of await pidsOfCommand('postgres')) {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ');
    const backend = /^postgres: [^:]+: \S+ (\S+) \S+/.exec(cmdline);
    if (!backend || backend[1] === database) pids.push(pid);
  }
  return pids;
}
