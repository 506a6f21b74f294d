/**
 * CPU per append of the store's append path alone, without HTTP: N appends through
 * `store.messages.append` into a set of rooms on PostgreSQL, one at a time (as appends spaced out at
 * a steady rate arrive, each alone in its batch) and then from concurrent callers (batched). Reports
 * this process's CPU per append (process.cpuUsage: the store, node-postgres and the socket writes)
 * and the CPU of the pool's PostgreSQL backends (from /proc, found by application name).
 *
 *   tsx --conditions=@chat/source bench/append-store-cost.ts [--n 20000] [--rooms 1000] [--concurrency 1,16]
 *     [--store ../libraries/store/src/index.ts] [--rounds 1]
 *
 * `--store` loads another copy of the store (another checkout's libraries/store/src/index.ts), so two
 * versions can be compared in one run; `--rounds 2` alternates them when several are given
 * (`--store a,b`), and then medians and minimums over the rounds close the report. A copy of another
 * commit: `git archive <commit> libraries/store | tar -x -C /tmp/other`, then link
 * /tmp/other/libraries/store/node_modules to this checkout's libraries/store/node_modules. Each run migrates a scratch schema of its own in the `test` database on
 * 127.0.0.1:5432 and drops it afterwards.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';

type StoreModule = typeof import('../../libraries/store/src/index.ts');

const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const APPLICATION_NAME = `append-store-cost-${process.pid}`;
const USER_HZ = 100;

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '20000' },
    rooms: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '1,16' },
    store: { type: 'string', default: new URL('../../libraries/store/src/index.ts', import.meta.url).pathname },
    rounds: { type: 'string', default: '1' },
  },
});

async function procCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/** CPU milliseconds so far of every backend serving this process's pool. */
async function backendCpuMs(admin: pg.Client): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [APPLICATION_NAME]);
  return new Map(await Promise.all(rows.map(async (r) => [r.pid, await procCpuMs(r.pid)] as const)));
}

function message(i: number) {
  const body = `bench message ${i}: the quick brown fox jumps over the lazy dog, and then some more words to make it typical`;
  return {
    senderKind: 'user' as const,
    senderId: `u_${i % 97}`,
    requestId: `req-${process.pid}-${i}-${Math.random().toString(36).slice(2)}`,
    idempotencyKey: `key-${process.pid}-${i}-${Math.random().toString(36).slice(2)}`,
    bodyMarkdown: body,
    bodyBytes: Buffer.byteLength(body),
    renderedHtml: `<p>${body}</p>\n`,
    mentions: null,
    authorizationDecisionId: `dec-${i}`,
    authorizingSubjectId: `u_${i % 97}`,
    authorizingSubjectKind: 'user' as const,
    botCredentialId: null,
    botGrantId: null,
  };
}

interface Figures {
  label: string;
  concurrency: number;
  appends: number;
  seconds: number;
  clientUs: number;
  clientUserUs: number;
  backendUs: number;
}

async function runOnce(storePath: string, admin: pg.Client, n: number, roomCount: number, concurrencies: number[]): Promise<Figures[]> {
  const mod = (await import(storePath)) as StoreModule;
  const schema = `bench_append_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = `${BASE_URL}?application_name=${APPLICATION_NAME}&options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const database = await mod.openDatabase({ kind: 'postgres', url });
  const figures: Figures[] = [];
  try {
    await mod.migrate(database);
    const store = mod.createStore(database);
    const rooms = Array.from({ length: roomCount }, (_, i) => ({ repositoryId: `repo-${i}`, branchId: null }));
    let next = 0;
    const appendOne = async () => {
      const i = next++;
      const outcome = await store.messages.append(rooms[(i * 7919) % roomCount]!, message(i), { newRoomId: `room-${schema}-${i}`, now: new Date() });
      if (outcome.kind !== 'created') throw new Error(`append ${i}: ${outcome.kind}`);
    };
    // Every room exists and every statement is prepared before anything is measured.
    for (let i = 0; i < roomCount; i++) await appendOne();
    for (const concurrency of concurrencies) {
      const beforeBackends = await backendCpuMs(admin);
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const end = next + n;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < end) await appendOne();
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const afterBackends = await backendCpuMs(admin);
      let backendMs = 0;
      for (const [pid, ms] of afterBackends) backendMs += ms - (beforeBackends.get(pid) ?? 0);
      figures.push({
        label: storePath,
        concurrency,
        appends: n,
        seconds,
        clientUs: (cpu.user + cpu.system) / n,
        clientUserUs: cpu.user / n,
        backendUs: (backendMs * 1000) / n,
      });
    }
  } finally {
    await database.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  }
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const n = Number(args.n);
  const roomCount = Number(args.rooms);
  const concurrencies = args.concurrency.split(',').map(Number);
  const stores = args.store.split(',').map((p) => resolve(p));
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  const all: Figures[] = [];
  try {
    for (let round = 0; round < Number(args.rounds); round++) {
      for (const storePath of stores) {
        for (const f of await runOnce(storePath, admin, n, roomCount, concurrencies)) {
          all.push(f);
          console.log(
            `${f.label} concurrency ${f.concurrency}: ${f.appends} appends in ${f.seconds.toFixed(1)} s (${(f.appends / f.seconds).toFixed(0)}/s); ` +
              `client CPU ${f.clientUs.toFixed(1)} µs/append (user ${f.clientUserUs.toFixed(1)}), backend CPU ${f.backendUs.toFixed(1)} µs/append`,
          );
        }
      }
    }
    if (Number(args.rounds) > 1) {
      console.log('median over rounds (min):');
      for (const storePath of stores) {
        for (const concurrency of concurrencies) {
          const runs = all.filter((f) => f.label === storePath && f.concurrency === concurrency);
          const stat = (pick: (f: Figures) => number) => `${median(runs.map(pick)).toFixed(1)} (${Math.min(...runs.map(pick)).toFixed(1)})`;
          console.log(
            `${storePath} concurrency ${concurrency}: client ${stat((f) => f.clientUs)} µs/append, user ${stat((f) => f.clientUserUs)}, ` +
              `backend ${stat((f) => f.backendUs)}`,
          );
        }
      }
    }
  } finally {
    await admin.end();
  }
}

await main();
