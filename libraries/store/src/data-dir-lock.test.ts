import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { DataDirInUseError, LOCK_FOLDER_NAME, lockDataDir, type OwnerRecord } from './data-dir-lock.ts';
import { openDatabase } from './database.ts';
import { ownIdentity } from './process-identity.ts';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const hasProc = existsSync('/proc/self/stat');

async function freshDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'chat-lock-'));
}

/** A process that only waits, so its PID is alive and (on Linux) has a start time. */
async function idleProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  return child;
}

async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** Writes an owner record as a process that took the folder earlier would have. */
async function writeOwner(dir: string, n: number, record: Partial<OwnerRecord>): Promise<void> {
  await mkdir(join(dir, LOCK_FOLDER_NAME), { recursive: true });
  const full: OwnerRecord = { ...ownIdentity(), since: '2026-01-01T00:00:00.000Z', ...record };
  await writeFile(join(dir, LOCK_FOLDER_NAME, String(n).padStart(12, '0')), JSON.stringify(full));
}

async function refusal(dir: string): Promise<DataDirInUseError> {
  const err = await lockDataDir(dir).then(
    () => expect.fail('the folder was taken'),
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(DataDirInUseError);
  return err as DataDirInUseError;
}

describe('data folder lock', function () {
  this.timeout(120_000);

  it('a second taker in this process is refused; after release the folder is taken again', async () => {
    const dir = await freshDir();
    const lock = await lockDataDir(dir);
    expect(lock.tookOverFrom).to.equal(undefined);
    expect((await refusal(dir)).message).to.contain(`the data folder ${dir} is already open in this process (PID ${process.pid})`);
    await lock.release();
    const again = await lockDataDir(dir);
    expect(again.tookOverFrom, 'a released folder is free, not taken over').to.equal(undefined);
    await again.release();
  });

  it('openDatabase takes the folder before PGlite opens it', async () => {
    const dir = await freshDir();
    const lock = await lockDataDir(dir);
    const err = await openDatabase({ kind: 'pglite', dataDir: dir }).then(
      () => expect.fail('PGlite opened a folder this process already holds'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(DataDirInUseError);
    expect(await readdir(dir), 'PGlite never touched the folder').to.deep.equal([LOCK_FOLDER_NAME]);
    await lock.release();
  });

  it('refuses while the owner runs, naming the folder and its PID', async function () {
    const owner = await idleProcess();
    try {
      const dir = await freshDir();
      await writeOwner(dir, 1, { pid: owner.pid!, start: hasProc ? startTime(owner.pid!) : null });
      const err = await refusal(dir);
      expect(err.message).to.contain(`the data folder ${dir} is in use by process ${owner.pid}`).and.contain('DATA_DIR');
    } finally {
      owner.kill('SIGKILL');
    }
  });

  it('takes over from an owner whose process has gone', async () => {
    const dir = await freshDir();
    const pid = await exitedPid();
    await writeOwner(dir, 7, { pid });
    const lock = await lockDataDir(dir);
    expect(lock.tookOverFrom?.pid).to.equal(pid);
    expect(await readdir(join(dir, LOCK_FOLDER_NAME)), 'only the newest record is kept').to.deep.equal(['000000000008']);
    await lock.release();
  });

  it('takes over from a record whose PID now belongs to another process (another start time)', async function () {
    if (!hasProc) this.skip();
    const other = await idleProcess();
    try {
      const dir = await freshDir();
      await writeOwner(dir, 1, { pid: other.pid!, start: String(Number(startTime(other.pid!)) - 1) });
      const lock = await lockDataDir(dir);
      expect(lock.tookOverFrom?.pid).to.equal(other.pid);
      await lock.release();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('refuses a record from another host, saying how to free the folder', async () => {
    const dir = await freshDir();
    await writeOwner(dir, 1, { pid: 1, host: `not-${hostname()}` });
    const err = await refusal(dir);
    expect(err.message).to.contain(`on host not-${hostname()}`).and.contain(`remove ${join(dir, LOCK_FOLDER_NAME)}`);
  });

  describe('processes racing for one folder (each a process of its own)', () => {
    /** Starts `count` contenders, lets them go at once, and sorts them into owners and refused. */
    async function race(dir: string, count: number) {
      const contenders = Array.from({ length: count }, () => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', 'test/lock-contender.ts', dir], { cwd: packageDir, stdio: ['pipe', 'pipe', 'inherit'] });
        let out = '';
        child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
        return { child, output: () => out };
      });
      const until = async (test: () => boolean) => {
        for (let i = 0; i < 1200 && !test(); i++) await new Promise((r) => setTimeout(r, 50));
        expect(test(), 'contenders did not answer in time').to.equal(true);
      };
      await until(() => contenders.every((c) => c.output().includes('ready')));
      for (const c of contenders) c.child.stdin!.write('go\n');
      await until(() => contenders.every((c) => /^(owner|refused) /m.test(c.output())));
      const owners = contenders.filter((c) => /^owner /m.test(c.output()));
      const refused = contenders.filter((c) => /^refused /m.test(c.output()));
      return {
        owners,
        refused,
        async end() {
          for (const c of contenders) c.child.stdin!.end();
          await Promise.all(contenders.map((c) => (c.child.exitCode === null ? once(c.child, 'exit') : undefined)));
        },
      };
    }

    for (const start of ['an empty folder', 'a crashed owner', 'a released owner'] as const) {
      it(`${start}: exactly one takes it, every other is refused naming the folder and the winner's PID`, async () => {
        const dir = await freshDir();
        let crashedPid: number | undefined;
        if (start === 'a crashed owner') await writeOwner(dir, 3, { pid: (crashedPid = await exitedPid()) });
        if (start === 'a released owner') await writeOwner(dir, 3, { pid: await exitedPid(), released: true });
        const result = await race(dir, 6);
        try {
          expect(result.owners.map((c) => c.output())).to.have.length(1);
          const winner = result.owners[0]!;
          const took = JSON.parse(/^owner (.*)$/m.exec(winner.output())![1]!) as { tookOverFrom: number | null };
          expect(took.tookOverFrom).to.equal(crashedPid ?? null);
          expect(result.refused).to.have.length(5);
          for (const loser of result.refused) expect(loser.output()).to.contain(`the data folder ${dir} is in use by process ${winner.child.pid}`);
          const records = (await readdir(join(dir, LOCK_FOLDER_NAME))).filter((name) => /^\d+$/.test(name));
          const newest = JSON.parse(await readFile(join(dir, LOCK_FOLDER_NAME, records.sort().at(-1)!), 'utf8')) as OwnerRecord;
          expect(newest.pid).to.equal(winner.child.pid);
        } finally {
          await result.end();
        }
        for (const loser of result.refused) expect(loser.child.exitCode).to.equal(3);
      });
    }
  });
});
