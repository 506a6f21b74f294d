import { newUlid } from '@chat/contracts';
import pg from 'pg';
import { measureAppendThroughput, type AppendThroughputResult } from './append-throughput.ts';
import { startBenchCluster, type BenchCluster } from './bench-cluster.ts';
import { SseLoadPool } from './sse-load-pool.ts';
import { benchTokens, branchEventsPath, branchMessagesPath, openRoomStreams, takeStreamBranches } from './stream-rooms.ts';

/**
 * An append request's JSON body as the shared harness's side-by-side scenarios send it (its default
 * `--size` of 200 bytes): the floor's parts and the service's figure use the same size.
 */
export const APPEND_REQUEST_BYTES = 200;

/**
 * A body of {@link APPEND_REQUEST_BYTES} bytes once in `{"bodyMarkdown":"…"}`, in the harness's
 * shape (`bench ts={ts} seq={seq} {pad}`), so the event is the size of side-by-side's events.
 */
export function floorBodyMarkdown(client: number, i: number): string {
  const head = `bench ts=${(performance.timeOrigin + performance.now()).toFixed(3)} seq=${client * 1_000_000 + i} `;
  return head + 'x'.repeat(Math.max(0, APPEND_REQUEST_BYTES - '{"bodyMarkdown":""}'.length - head.length));
}

/** What one append puts on the wire, measured on a running deployment. */
export interface AppendSizes {
  /** The POST's JSON body. */
  requestBodyBytes: number;
  /** The request's `authorization` header value (a bearer token). */
  authorizationBytes: number;
  /** The 201's body. */
  answerBytes: number;
  /** The `data` of the stream's message event (the backbone carries the same JSON). */
  eventBytes: number;
}

/**
 * Appends one message of the floor's body to a fresh room while a stream is open on it, and
 * measures the request, the 201's body and the event the stream receives.
 */
export async function measureAppendSizes(cluster: BenchCluster): Promise<AppendSizes> {
  const [branch] = takeStreamBranches(cluster, 1);
  const { readers, writers } = await benchTokens(cluster);
  const stream = new AbortController();
  const events = await fetch(cluster.gatewayUrls[0]! + branchEventsPath(cluster, branch!), { headers: { authorization: `Bearer ${readers[0]}` }, signal: stream.signal });
  if (events.status !== 200 || !events.body) throw new Error(`stream open answered ${events.status}`);
  try {
    const body = JSON.stringify({ bodyMarkdown: floorBodyMarkdown(0, 0) });
    const answer = await fetch(cluster.apiUrls[0]! + branchMessagesPath(cluster, branch!), {
      method: 'POST',
      headers: { authorization: `Bearer ${writers[0]}`, 'content-type': 'application/json', 'idempotency-key': newUlid() },
      body,
    });
    const answerText = await answer.text();
    if (answer.status !== 201) throw new Error(`append answered ${answer.status}: ${answerText}`);
    const eventData = await firstMessageData(events.body);
    return {
      requestBodyBytes: Buffer.byteLength(body),
      authorizationBytes: `Bearer ${writers[0]}`.length,
      answerBytes: Buffer.byteLength(answerText),
      eventBytes: Buffer.byteLength(eventData),
    };
  } finally {
    stream.abort();
  }
}

/** The service's event's size, on a deployment of its own (1 API, 1 gateway) started for the reading. */
export async function measureServiceEventBytes(): Promise<number> {
  const cluster = await startBenchCluster('distributed', { apis: 1, gateways: 1 });
  try {
    return (await measureAppendSizes(cluster)).eventBytes;
  } finally {
    await cluster.stop();
  }
}

/** The `data` of the first `message` event of an SSE body (single-line data, as the gateway writes it). */
async function firstMessageData(body: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  const deadline = setTimeout(() => void body.cancel().catch(() => undefined), 10_000);
  try {
    for await (const chunk of body) {
      text += decoder.decode(chunk, { stream: true });
      for (const frame of text.split('\n\n').slice(0, -1)) {
        const lines = frame.split('\n');
        if (!lines.includes('event: message')) continue;
        const data = lines.find((l) => l.startsWith('data: '));
        if (data) return data.slice('data: '.length);
      }
    }
  } finally {
    clearTimeout(deadline);
  }
  throw new Error('the stream ended before a message event');
}

export interface ServiceAtSaturation {
  /** The level of writers with the most appends per second. */
  best: AppendThroughputResult;
  levels: AppendThroughputResult[];
  /** Message events the streams received per append over the best level's window. */
  deliveriesPerAppend: number;
  /** Appends per transaction committed in the deployment's database over the best level's window (every transaction counted). */
  appendsPerCommit: number;
  streams: number;
}

/**
 * The service's CPU per append at saturation, with the floor's shape: the 100 branch rooms the
 * append scenario writes to each hold `perRoom` streams (so every append is delivered `perRoom`
 * times, as in side-by-side scenario c), then closed-loop writers at each level of `writerCounts`
 * append the floor's bodies over them. CPU by role comes from append-cpu.ts; the stream clients run
 * in a child process of their own and are not counted.
 */
export async function measureServiceAtSaturation(
  cluster: BenchCluster,
  options: { perRoom: number; seconds: number; warmupSeconds: number; writerCounts: readonly number[] },
): Promise<ServiceAtSaturation> {
  const pool = await SseLoadPool.start(1);
  const stats = new pg.Client({ connectionString: cluster.databaseUrl });
  await stats.connect();
  // Transactions committed in the deployment's database (PostgreSQL's statistics lag by up to a second).
  const commits = async () => Number((await stats.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.n);
  try {
    const open = await openRoomStreams(cluster, pool, { branches: cluster.fixture.branchIds, perRoom: options.perRoom, gatewayUrls: cluster.gatewayUrls, measure: 'count', concurrency: 32 });
    const streams = cluster.fixture.branchIds.length * options.perRoom;
    if (open.opened !== streams) throw new Error(`opened ${open.opened} of ${streams} streams: ${JSON.stringify(open.failures)}`);
    // Warm-up, not counted: fresh processes spend their first seconds compiling hot code.
    await measureAppendThroughput(cluster, { rooms: 100, clients: 32, seconds: options.warmupSeconds, bodyMarkdown: floorBodyMarkdown });
    const levels: AppendThroughputResult[] = [];
    const delivered: number[] = [];
    const committed: number[] = [];
    for (const clients of options.writerCounts) {
      await pool.reset();
      const before = await commits();
      levels.push(await measureAppendThroughput(cluster, { rooms: 100, clients, seconds: options.seconds, bodyMarkdown: floorBodyMarkdown }));
      // Deliveries of the window's last appends may still be in flight, and statistics lag: read once they have landed.
      await new Promise((r) => setTimeout(r, 1000));
      delivered.push((await pool.report()).events);
      committed.push((await commits()) - before);
    }
    const bestIndex = levels.reduce((b, l, i) => (l.appendsPerSecond > levels[b]!.appendsPerSecond ? i : b), 0);
    const best = levels[bestIndex]!;
    const perAppend = (n: number) => n / Math.max(1, best.appended);
    return { best, levels, deliveriesPerAppend: perAppend(delivered[bestIndex]!), appendsPerCommit: best.appended / Math.max(1, committed[bestIndex]!), streams };
  } finally {
    await stats.end();
    await pool.close();
  }
}

