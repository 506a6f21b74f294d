/**
 * One load-client process of the stream benchmarks (`node --import tsx tests/bench/sse-load-worker.ts`,
 * forked by {@link ../sse-load-pool.ts}). It holds thousands of raw node:http SSE connections and
 * does the least work per event the figures need: in `count` mode it counts `message` frames with a
 * byte search; in `latency` mode it also reads the send time the writer put at the start of the
 * body (`lat <monotonic ms>`) and bins receipt minus send time in a histogram. No event is parsed
 * as JSON. Commands and replies travel over the IPC channel.
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { monotonicMs } from './monotonic-clock.ts';
import { BUCKET_MS, type MeasureMode, type StreamTarget, type WorkerCommand, type WorkerReply } from './sse-load-protocol.ts';

const MESSAGE_FRAME = Buffer.from('\nevent: message\n');
const LATENCY_MARKER = Buffer.from('"bodyMarkdown":"lat ');
const QUOTE = 0x22;

let events = 0;
let windowStart = monotonicMs();
let histogram = new Map<number, number>();
let open = 0;
let ended = 0;
const requests = new Set<ClientRequest>();

function countFrames(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(MESSAGE_FRAME); i >= 0; i = buf.indexOf(MESSAGE_FRAME, i + MESSAGE_FRAME.length)) n++;
  return n;
}

/** Counts message frames in a byte stream; only the last few bytes of a chunk are kept between chunks. */
function countingReader(): (chunk: Buffer) => void {
  const keep = MESSAGE_FRAME.length - 1;
  let carry: Buffer | undefined;
  return (chunk) => {
    // A frame marker split over two chunks is found in the small joint; no whole-chunk copy.
    if (carry) events += countFrames(Buffer.concat([carry, chunk.subarray(0, keep)]));
    events += countFrames(chunk);
    carry = Buffer.from(chunk.subarray(Math.max(0, chunk.length - keep)));
  };
}

/** Reads each message's send time out of its body and records receipt latency. */
function latencyReader(): (chunk: Buffer) => void {
  let carry: Buffer | undefined;
  return (chunk) => {
    const now = monotonicMs();
    const buf = carry ? Buffer.concat([carry, chunk]) : chunk;
    carry = undefined;
    let pos = 0;
    for (;;) {
      const marker = buf.indexOf(LATENCY_MARKER, pos);
      if (marker < 0) {
        carry = Buffer.from(buf.subarray(Math.max(pos, buf.length - (LATENCY_MARKER.length - 1))));
        return;
      }
      const start = marker + LATENCY_MARKER.length;
      const end = buf.indexOf(QUOTE, start);
      if (end < 0) {
        carry = Buffer.from(buf.subarray(marker));
        return;
      }
      events++;
      const bucket = Math.max(0, Math.floor((now - Number(buf.toString('latin1', start, end))) / BUCKET_MS));
      histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
      pos = end + 1;
    }
  };
}

function openOne(target: StreamTarget, measure: MeasureMode): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request(target.url, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${target.token}` },
      agent: false,
    });
    requests.add(req);
    let settled = false;
    const settle = (failure: string | undefined) => {
      if (settled) return;
      settled = true;
      resolve(failure);
    };
    req.on('error', (err: NodeJS.ErrnoException) => settle(`network ${err.code ?? err.message}`));
    req.on('close', () => requests.delete(req));
    req.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const code = /"code":"([A-Z_]+)"/.exec(text)?.[1];
          settle(`${res.statusCode}${code ? ` ${code}` : ''}`);
        });
        return;
      }
      open++;
      let gone = false;
      const onGone = () => {
        if (gone) return;
        gone = true;
        open--;
        ended++;
      };
      res.on('data', measure === 'latency' ? latencyReader() : countingReader());
      res.on('end', onGone);
      res.on('close', onGone);
      res.on('error', onGone);
      settle(undefined);
    });
    req.end();
  });
}

async function openAll(targets: StreamTarget[], concurrency: number, measure: MeasureMode): Promise<WorkerReply> {
  const started = monotonicMs();
  const failures: Record<string, number> = {};
  let next = 0;
  let opened = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, concurrency) }, async () => {
      while (next < targets.length) {
        const failure = await openOne(targets[next++]!, measure);
        if (failure === undefined) opened++;
        else failures[failure] = (failures[failure] ?? 0) + 1;
      }
    }),
  );
  return { type: 'opened', opened, failures, ms: monotonicMs() - started };
}

async function dropAll(): Promise<void> {
  for (const req of requests) req.destroy();
  const deadline = monotonicMs() + 10_000;
  while (open > 0 && monotonicMs() < deadline) await new Promise((r) => setTimeout(r, 20));
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function handle(command: WorkerCommand): Promise<WorkerReply> {
  switch (command.type) {
    case 'open':
      return openAll(command.targets, command.concurrency, command.measure);
    case 'reset':
      events = 0;
      histogram = new Map();
      windowStart = monotonicMs();
      return { type: 'report', events: 0, elapsedMs: 0, open, ended, histogram: [], cpuMs: cpuMs() };
    case 'report':
      return { type: 'report', events, elapsedMs: monotonicMs() - windowStart, open, ended, histogram: [...histogram], cpuMs: cpuMs() };
    case 'drop':
      await dropAll();
      ended = 0;
      return { type: 'dropped' };
    case 'close':
      for (const req of requests) req.destroy();
      return { type: 'closed' };
  }
}

process.on('message', (command: WorkerCommand) => {
  void handle(command).then((reply) => {
    process.send!(reply);
    if (reply.type === 'closed') process.disconnect();
  });
});
// The parent going away (a crashed bench run) must not leave thousands of sockets open.
process.on('disconnect', () => process.exit(0));
