/**
 * Client CPU per Redis operation of the two commands every append makes: a backbone publish of one
 * ~1 KB event, and a live subscription receiving events that another process publishes. A figure is `process.cpuUsage()` of the measuring process over
 * the operations, less the CPU of the pacing loop alone, so it is the operation's own cost with its
 * syscalls.
 *
 * Patterns: `spaced` runs one operation at a time with a 1 ms gap (appends spread over many rooms:
 * one command per event-loop tick); `burst` keeps `--burst` (16) operations in flight (for the
 * subscription: that many events published at once, then the gap).
 *
 * `--roots a,b` loads the packages of several checkouts of this repository (each with its own
 * node_modules) into one measuring process and alternates blocks of operations between them, so a
 * before/after comparison shares the machine's noise; the default root is this checkout.
 *
 * `CHILD_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"` profiles the measuring process.
 *
 *   pnpm exec tsx tests/bench/redis-command-cost.ts [--roots /path/to/base,.] [--ops 20000] [--block 1000]
 *     [--scenarios publish,subscribe] [--patterns spaced,burst] [--burst 16] [--redis redis://127.0.0.1:6379]
 */
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';

type Scenario = 'publish' | 'subscribe';
type Pattern = 'spaced' | 'burst';
type BackboneModule = typeof import('../../libraries/backbone/src/index.ts');
type BenchEvent = { channel: 'messages'; scopeKey: string; seq: number; data: string };

const HERE = fileURLToPath(import.meta.url);
const OWN_ROOT = resolve(dirname(HERE), '../..');
const GAP_MS = 1;
const WARMUP = 1000;
const ROOMS = 1000;
/** Operations in flight in the `burst` pattern. */
const BURST = Number(arg('burst', '16'));

/** What a measuring child prints per root, last line of its stdout. */
interface SideReport {
  root: string;
  /** Net CPU µs per operation over each half of the blocks, then over all. */
  firstHalf: number;
  secondHalf: number;
  all: number;
  pacingUs: number;
  opsPerSecond: number;
}

/** One checkout's implementation of the measured operation, set up in the measuring process. */
interface Side {
  root: string;
  /** Runs `count` operations from index `from` and resolves when they are done. */
  runBlock(from: number, count: number): Promise<void>;
  close(): Promise<void>;
}

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? (process.argv[at + 1] as string) : fallback;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** A ~1 KB message event, as the API publishes it. */
function event(i: number): BenchEvent {
  const data = JSON.stringify({ id: `msg-${i}`, roomId: `room-${i % ROOMS}`, body: 'x'.repeat(900), author: 'user-1', at: new Date(0).toISOString() });
  return { channel: 'messages', scopeKey: `room-${i % ROOMS}`, seq: i + 1, data };
}

/** Runs ops `from`..`from + count` as `pattern`. */
async function paced(pattern: Pattern, from: number, count: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = from;
  const end = from + count;
  const lane = async (gap: boolean) => {
    while (next < end) {
      await op(next++);
      if (gap) await sleep(GAP_MS);
    }
  };
  if (pattern === 'spaced') await lane(true);
  else await Promise.all(Array.from({ length: BURST }, () => lane(false)));
}

/** A library of the checkout at `root` (an older checkout may keep its libraries under `packages/`). */
const importFrom = async <T>(root: string, pkg: string): Promise<T> => {
  const folder = existsSync(`${root}/libraries/${pkg}`) ? 'libraries' : 'packages';
  return (await import(pathToFileURL(`${root}/${folder}/${pkg}/src/index.ts`).href)) as T;
};

async function publishSide(root: string, redisUrl: string, prefix: string, pattern: Pattern): Promise<Side> {
  const { RedisStreamsBackbone } = await importFrom<BackboneModule>(root, 'backbone');
  const backbone = new RedisStreamsBackbone({ redis: redisUrl, keyPrefix: prefix, trimIntervalMs: 0 });
  const events = Array.from({ length: ROOMS }, (_, i) => event(i));
  const op = (i: number) => backbone.publish([events[i % ROOMS] as BenchEvent]);
  return { root, runBlock: (from, count) => paced(pattern, from, count, op), close: () => backbone.close() };
}

/**
 * A live subscription on its own key prefix; a block asks the parent (a separate process, whose
 * CPU is not counted) to publish `count` events on that prefix and resolves when all arrived.
 */
async function subscribeSide(root: string, redisUrl: string, prefix: string, pattern: Pattern): Promise<Side> {
  const { RedisStreamsBackbone } = await importFrom<BackboneModule>(root, 'backbone');
  const backbone = new RedisStreamsBackbone({ redis: redisUrl, keyPrefix: prefix, trimIntervalMs: 0 });
  let awaited = 0;
  let arrived: () => void = () => undefined;
  const subscription = await backbone.subscribe('messages', () => {
    if (--awaited === 0) arrived();
  });
  return {
    root,
    runBlock: (_from, count) =>
      new Promise<void>((resolveBlock) => {
        awaited = count;
        arrived = resolveBlock;
        process.stdout.write(`feed ${prefix} ${count} ${pattern}\n`);
      }),
    close: async () => {
      await subscription.close();
      await backbone.close();
    },
  };
}

async function runChild(): Promise<void> {
  const scenario = arg('child', '') as Scenario;
  const roots = arg('roots', OWN_ROOT).split(',');
  const prefixes = arg('prefixes', '').split(',');
  const redisUrl = arg('redis', 'redis://127.0.0.1:6379');
  const ops = Number(arg('ops', '20000'));
  const block = Number(arg('block', '1000'));
  const pattern = arg('pattern', 'spaced') as Pattern;
  const open = scenario === 'publish' ? publishSide : subscribeSide;
  const sides: Side[] = [];
  for (const [n, root] of roots.entries()) sides.push(await open(root, redisUrl, prefixes[n] as string, pattern));
  for (const side of sides) await side.runBlock(0, WARMUP);
  // The spaced loop's own CPU (timer, promise, wake-up), measured alone; the feeder paces subscriptions.
  let pacingUs = 0;
  if (pattern === 'spaced' && scenario !== 'subscribe') {
    const c0 = cpuUs();
    await paced('spaced', 0, block, async () => undefined);
    pacingUs = (cpuUs() - c0) / block;
  }
  const blocks = Math.ceil(ops / block);
  const cpu = sides.map(() => [] as number[]);
  const seconds = sides.map(() => 0);
  for (let b = 0; b < blocks; b++) {
    // Alternate which side goes first, so neither always follows the other.
    const order = b % 2 === 0 ? sides.map((_, n) => n) : sides.map((_, n) => sides.length - 1 - n);
    for (const n of order) {
      const started = performance.now();
      const c0 = cpuUs();
      await (sides[n] as Side).runBlock(WARMUP + b * block, block);
      (cpu[n] as number[]).push(cpuUs() - c0);
      seconds[n] = (seconds[n] as number) + (performance.now() - started) / 1000;
    }
  }
  for (const side of sides) await side.close();
  const perOp = (values: number[]) => values.reduce((a, v) => a + v, 0) / (values.length * block) - pacingUs;
  const reports: SideReport[] = sides.map((side, n) => {
    const values = cpu[n] as number[];
    const half = Math.floor(values.length / 2);
    return {
      root: side.root,
      firstHalf: perOp(values.slice(0, half)),
      secondHalf: perOp(values.slice(half)),
      all: perOp(values),
      pacingUs,
      opsPerSecond: (values.length * block) / (seconds[n] as number),
    };
  });
  process.stdout.write(`${JSON.stringify(reports)}\n`);
  process.exit(0);
}

/** Publishes `count` events on `prefix` for a subscribing child, spaced or in bursts of 16. */
class Feeder {
  private readonly backbones = new Map<string, Promise<{ publish(events: BenchEvent[]): Promise<void>; close(): Promise<void> }>>();
  private seq = 0;

  constructor(private readonly redisUrl: string) {}

  async feed(prefix: string, count: number, pattern: Pattern): Promise<void> {
    let opened = this.backbones.get(prefix);
    if (!opened) {
      opened = importFrom<BackboneModule>(OWN_ROOT, 'backbone').then(({ RedisStreamsBackbone }) => new RedisStreamsBackbone({ redis: this.redisUrl, keyPrefix: prefix, trimIntervalMs: 0 }));
      this.backbones.set(prefix, opened);
    }
    const backbone = await opened;
    const perRound = pattern === 'burst' ? BURST : 1;
    for (let sent = 0; sent < count; sent += perRound) {
      await backbone.publish(Array.from({ length: Math.min(perRound, count - sent) }, () => event(this.seq++)));
      await sleep(GAP_MS);
    }
  }

  async close(): Promise<void> {
    for (const opened of this.backbones.values()) await (await opened).close();
  }
}

async function measure(roots: string[], scenario: Scenario, pattern: Pattern, ops: number, block: number, redisUrl: string): Promise<SideReport[]> {
  const prefixes = roots.map(() => `bench-rc-${randomUUID().slice(0, 8)}`);
  const feeder = new Feeder(redisUrl);
  const child = spawn(
    process.execPath,
    [...(process.env.CHILD_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', '--conditions=@chat/source', HERE, '--child', scenario, '--roots', roots.join(','), '--prefixes', prefixes.join(','), '--pattern', pattern, '--burst', String(BURST), '--ops', String(ops), '--block', String(block), '--redis', redisUrl],
    { cwd: OWN_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<number | null>((r) => child.on('exit', r));
  let reports: SideReport[] | undefined;
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const [word, prefix, count, feedPattern] = line.split(' ');
      if (word === 'feed') await feeder.feed(prefix as string, Number(count), feedPattern as Pattern);
      else if (line.startsWith('[')) reports = JSON.parse(line) as SideReport[];
    }
    const code = await exited;
    if (!reports) throw new Error(`${scenario} ${pattern} child exited with ${code}`);
    return reports;
  } finally {
    await feeder.close();
    for (const prefix of prefixes) await dropKeys(redisUrl, prefix);
  }
}

async function dropKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = nextCursor;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function runParent(): Promise<void> {
  const roots = arg('roots', OWN_ROOT).split(',').map((r) => resolve(r));
  const ops = Number(arg('ops', '20000'));
  const block = Number(arg('block', '1000'));
  const redisUrl = arg('redis', 'redis://127.0.0.1:6379');
  const scenarios = arg('scenarios', 'publish,subscribe').split(',') as Scenario[];
  const patterns = arg('patterns', 'spaced,burst').split(',') as Pattern[];
  console.log(`client CPU per operation in µs, ${ops} operations per root in blocks of ${block}, roots alternating; net of the pacing loop`);
  for (const scenario of scenarios) {
    for (const pattern of patterns) {
      const reports = await measure(roots, scenario, pattern, ops, block, redisUrl);
      for (const r of reports) {
        const figures = `net ${r.all.toFixed(1).padStart(6)}  (halves ${r.firstHalf.toFixed(1)} / ${r.secondHalf.toFixed(1)}, pacing ${r.pacingUs.toFixed(1)}, ${Math.round(r.opsPerSecond)} ops/s)`;
        console.log(`${`${scenario} ${pattern}`.padEnd(18)} ${r.root.padEnd(28)} ${figures}`);
      }
    }
  }
}

await (process.argv.includes('--child') ? runChild() : runParent());
