/**
 * One process owns an embedded database folder. PGlite has no lock of its own: two processes on one
 * folder each ran, each acknowledged its appends, and whichever wrote last kept only its own.
 *
 * The owner is recorded in `<dataDir>/chat-owner.lock/`, as numbered records (`000000000001`, ...);
 * the highest number is the owner, and it owns the folder while its process runs. Every record
 * appears by one exclusive create (a hard link of a fully written file, so no reader ever sees half
 * a record):
 * - a process takes the folder by creating the number after the highest, and only when the highest
 *   is released or names a process that no longer runs. Two processes that both find the owner gone
 *   race for the same number, and exactly one creates it: a crashed owner is never taken over twice.
 * - a clean stop marks its record released, in place (an atomic rename over it); the records never
 *   disappear, so the numbers only grow and a slow racer can never create a number that was already
 *   taken. The new owner removes the older records; a racer that then fills such a gap finds a
 *   higher number after its create, and withdraws.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { isOwnProcess, ownIdentity, processState, type ProcessIdentity } from './process-identity.ts';

/** The folder of owner records inside a data folder. */
export const LOCK_FOLDER_NAME = 'chat-owner.lock';

/** One owner record. */
export interface OwnerRecord extends ProcessIdentity {
  /** When the owner took the folder (ISO 8601). */
  since: string;
  /** Set by a clean stop: the folder is free. */
  released?: true;
}

/** The ownership of one data folder, held until `release()`. */
export interface DataDirLock {
  /** The data folder, absolute. */
  readonly dir: string;
  /** The owner this process replaced because its process had gone (a crash), if any. */
  readonly tookOverFrom: OwnerRecord | undefined;
  /** Marks the folder free; the database must be closed first. Safe to call twice. */
  release(): Promise<void>;
}

/** The data folder belongs to a process that still runs (or, on another host, may). */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: OwnerRecord,
    state: 'running' | 'unknown' | 'this process',
  ) {
    const folder = join(dir, LOCK_FOLDER_NAME);
    super(
      state === 'this process'
        ? `the data folder ${dir} is already open in this process (PID ${holder.pid})`
        : state === 'unknown'
          ? `the data folder ${dir} is in use by process ${holder.pid} on host ${holder.host} (since ${holder.since}); if that process no longer runs, remove ${folder} and start again`
          : `the data folder ${dir} is in use by process ${holder.pid} (since ${holder.since}): one folder holds one process's embedded database. Stop that process, or set DATA_DIR to another folder`,
    );
    this.name = 'DataDirInUseError';
  }
}

const RECORD_NAME = /^\d{12}$/;
const recordName = (n: number) => String(n).padStart(12, '0');

/** The highest record and its number; undefined in a folder no process has owned yet. */
async function newestRecord(folder: string): Promise<{ n: number; record: OwnerRecord } | undefined> {
  const numbers = (await readdir(folder)).filter((name) => RECORD_NAME.test(name)).map(Number);
  if (numbers.length === 0) return undefined;
  const n = Math.max(...numbers);
  const text = await readFile(join(folder, recordName(n)), 'utf8');
  try {
    return { n, record: JSON.parse(text) as OwnerRecord };
  } catch {
    throw new Error(`the owner record ${join(folder, recordName(n))} is unreadable; if no process uses the data folder, remove ${folder} and start again`);
  }
}

/**
 * Takes the data folder for this process (creating it if needed) before its database is opened.
 * Throws DataDirInUseError, naming the folder and the owner's PID, while another process owns it.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  const folder = join(dir, LOCK_FOLDER_NAME);
  await mkdir(folder, { recursive: true });
  const mine: OwnerRecord = { ...ownIdentity(), since: new Date().toISOString() };
  // Temporary files carry the PID, so a later owner can clear those of processes that crashed.
  const draft = join(folder, `draft-${process.pid}-${randomUUID()}`);
  await writeFile(draft, JSON.stringify(mine), { flag: 'wx' });
  try {
    // Each round ends in an error, the folder, or a lost race; a lost race means a record was created meanwhile.
    for (let round = 0; round < 1000; round++) {
      let newest: Awaited<ReturnType<typeof newestRecord>>;
      try {
        newest = await newestRecord(folder);
      } catch (err) {
        // Records are only removed below a newer one, so the newest one is there on the next look.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      let previous: OwnerRecord | undefined;
      if (newest && !newest.record.released) {
        if (isOwnProcess(newest.record)) throw new DataDirInUseError(dir, newest.record, 'this process');
        const state = processState(newest.record);
        if (state !== 'gone') throw new DataDirInUseError(dir, newest.record, state);
        previous = newest.record;
      }
      const n = (newest?.n ?? 0) + 1;
      const path = join(folder, recordName(n));
      try {
        await link(draft, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      const after = await newestRecord(folder).catch(() => undefined);
      if (after?.n !== n) {
        // A gap below the newest record, left by a clean-up: this create took nothing.
        await rm(path, { force: true });
        continue;
      }
      await clearOlder(folder, n);
      return ownerLock(dir, path, mine, previous);
    }
    throw new Error(`could not take the data folder ${dir}: its owner records in ${folder} kept changing`);
  } finally {
    await rm(draft, { force: true });
  }
}

/** Removes records older than `n` and the drafts of processes that no longer run. */
async function clearOlder(folder: string, n: number): Promise<void> {
  for (const name of await readdir(folder)) {
    const draftPid = /^draft-(\d+)-/.exec(name)?.[1];
    const stale = RECORD_NAME.test(name) ? Number(name) < n : draftPid !== undefined && Number(draftPid) !== process.pid && !pidRuns(Number(draftPid));
    if (stale) await rm(join(folder, name), { force: true });
  }
}

function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ownerLock(dir: string, path: string, mine: OwnerRecord, previous: OwnerRecord | undefined): DataDirLock {
  let released = false;
  return {
    dir,
    tookOverFrom: previous,
    async release() {
      if (released) return;
      released = true;
      const draft = join(dirname(path), `draft-${process.pid}-${randomUUID()}`);
      await writeFile(draft, JSON.stringify({ ...mine, released: true } satisfies OwnerRecord));
      await rename(draft, path);
    },
  };
}
