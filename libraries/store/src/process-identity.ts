/**
 * Who a process is, beyond its PID: a PID is reused once its process has exited, so a record that
 * names only a PID could make a dead owner look alive (the folder then stays refused) or, worse, a
 * live one look dead. On Linux the kernel's start time of the process (`/proc/<pid>/stat`, field 22)
 * and the boot ID tell the two apart; elsewhere the PID alone is what there is.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface ProcessIdentity {
  pid: number;
  /** Start time in clock ticks since boot (Linux); null where the system does not tell. */
  start: string | null;
  /** The kernel's boot ID (Linux): PIDs and start times only compare within one boot. */
  boot: string | null;
  host: string;
}

/** Whether the process a record names still runs, has gone, or cannot be checked from here. */
export type ProcessState = 'running' | 'gone' | 'unknown';

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The start time field of `/proc/<pid>/stat`; the command name before it may hold spaces and parentheses. */
function startTimeOf(pid: number): string | null {
  const stat = readOrNull(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields after the name start at field 3; the start time is field 22.
  return fields[22 - 3] ?? null;
}

function bootId(): string | null {
  return readOrNull('/proc/sys/kernel/random/boot_id')?.trim() ?? null;
}

/** This process as a record names it. */
export function ownIdentity(): ProcessIdentity {
  return { pid: process.pid, start: startTimeOf(process.pid), boot: bootId(), host: hostname() };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Checks the process a record names. A record from another host is `unknown`: its PID means
 * nothing here, so it must be taken as running.
 */
export function processState(record: ProcessIdentity): ProcessState {
  if (record.host !== hostname()) return 'unknown';
  const boot = bootId();
  if (record.boot !== null && boot !== null && record.boot !== boot) return 'gone';
  if (!Number.isInteger(record.pid) || record.pid <= 0 || !pidExists(record.pid)) return 'gone';
  if (record.start === null) return 'running';
  const start = startTimeOf(record.pid);
  // The PID was given to another process since the record was written.
  if (start !== null && start !== record.start) return 'gone';
  return 'running';
}

/** Whether a record names this very process. */
export function isOwnProcess(record: ProcessIdentity): boolean {
  const own = ownIdentity();
  return record.pid === own.pid && record.host === own.host && record.start === own.start;
}
