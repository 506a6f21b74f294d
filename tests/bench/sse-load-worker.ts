/**
 * One load-client process of the stream benchmarks (`node --import tsx tests/bench/sse-load-worker.ts`,
 * forked by {@link ../sse-load-pool.ts}). It holds thousands of SSE connections on plain TCP
 * sockets (it writes the request and reads the status line itself: node:http's response parsing
 * and stream machinery cost the clients more CPU than the gateways spent delivering, on the same two
 * cores) and does the least work per event the figures need: in `count` mode it counts `message`
 * frames with a byte search over the raw bytes (the chunked framing between frames cannot contain the
 * markers: frames carry no CR); in `latency` mode it also reads the send time the writer put at the
 * start of the body (`lat <monotonic ms>`) and bins receipt minus send time in a histogram; in `ids`
 * mode it keeps each message's `messageId` per stream, in arrival order, for the bench to check
 * against the room's history; in `resume` mode each stream reconnects as the SDK does
 * (resuming-load-stream.ts). No event is parsed as JSON. Commands and replies travel over the IPC channel.
 */
import { connect, type Socket } from 'node:net';
import { monotonicMs } from './monotonic-clock.ts';
import { ResumingLoadStream, type ResumeHooks } from './resuming-load-stream.ts';
import { BUCKET_MS, type MeasureMode, type StreamTarget, type WorkerCommand, type WorkerReply } from './sse-load-protocol.ts';

const MESSAGE_FRAME = Buffer.from('\nevent: message\n');
const LATENCY_MARKER = Buffer.from('"bodyMarkdown":"lat ');
const MESSAGE_ID_MARKER = Buffer.from('"messageId":"');
const QUOTE = 0x22;

let events = 0;
let windowStart = monotonicMs();
let histogram = new Map<number, number>();
let open = 0;
let ended = 0;
const sockets = new Set<Socket>();
/** `ids` mode: the messageIds of each stream by target key, in arrival order. */
const received = new Map<string, string[]>();
/** `resume` mode: the reconnecting streams. */
let resuming: ResumingLoadStream[] = [];

const resumeHooks: ResumeHooks = {
  opened: () => void open++,
  ended: () => {
    open--;
    ended++;
  },
  message: () => void events++,
  heldLatency: (ms) => {
    const bucket = Math.max(0, Math.floor(ms / BUCKET_MS));
    histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
  },
};

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

/**
 * Calls `onValue` with the text between each `marker` (which ends with an opening quote) and the
 * next quote, across chunk boundaries. JSON escapes the quotes inside strings, so a marker found
 * in the raw bytes is a field of the event's data, never text of a body.
 */
function quotedValueReader(marker: Buffer, onValue: (value: string) => void): (chunk: Buffer) => void {
  let carry: Buffer | undefined;
  return (chunk) => {
    const buf = carry ? Buffer.concat([carry, chunk]) : chunk;
    carry = undefined;
    let pos = 0;
    for (;;) {
      const at = buf.indexOf(marker, pos);
      if (at < 0) {
        carry = Buffer.from(buf.subarray(Math.max(pos, buf.length - (marker.length - 1))));
        return;
      }
      const start = at + marker.length;
      const end = buf.indexOf(QUOTE, start);
      if (end < 0) {
        carry = Buffer.from(buf.subarray(at));
        return;
      }
      onValue(buf.toString('latin1', start, end));
      pos = end + 1;
    }
  };
}

/** Reads each message's send time out of its body and records receipt latency. */
function latencyReader(): (chunk: Buffer) => void {
  let now = 0;
  const read = quotedValueReader(LATENCY_MARKER, (sentAt) => {
    events++;
    const bucket = Math.max(0, Math.floor((now - Number(sentAt)) / BUCKET_MS));
    histogram.set(bucket, (histogram.get(bucket) ?? 0) + 1);
  });
  return (chunk) => {
    now = monotonicMs();
    read(chunk);
  };
}

/** Keeps each message's `messageId` in arrival order (`received` hands them to the bench). */
function idsReader(ids: string[]): (chunk: Buffer) => void {
  return quotedValueReader(MESSAGE_ID_MARKER, (messageId) => {
    events++;
    ids.push(messageId);
  });
}

function reader(target: StreamTarget, measure: MeasureMode): (chunk: Buffer) => void {
  if (measure === 'latency') return latencyReader();
  if (measure === 'count') return countingReader();
  const ids: string[] = [];
  received.set(target.key ?? target.url, ids);
  return idsReader(ids);
}

const HEADER_END = Buffer.from('\r\n\r\n');

function openOne(target: StreamTarget, measure: MeasureMode): Promise<string | undefined> {
  if (measure === 'resume') {
    const stream = new ResumingLoadStream(target, resumeHooks);
    resuming.push(stream);
    return stream.start().then(() => undefined);
  }
  return new Promise((resolve) => {
    const url = new URL(target.url);
    const socket = connect(Number(url.port), url.hostname);
    sockets.add(socket);
    let settled = false;
    const settle = (failure: string | undefined) => {
      if (settled) return;
      settled = true;
      resolve(failure);
    };
    // `Connection: close`: the server closes the socket when it ends the stream, which is how an
    // ended stream is seen without parsing the chunked framing.
    socket.write(
      `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n` +
        `Authorization: Bearer ${target.token}\r\nConnection: close\r\n\r\n`,
    );
    let head: Buffer | undefined = Buffer.alloc(0);
    let status = 0;
    let gone = false;
    const onGone = () => {
      if (gone) return;
      gone = true;
      if (status === 200) {
        open--;
        ended++;
      }
    };
    const read = reader(target, measure);
    socket.on('data', (chunk: Buffer) => {
      if (head === undefined) return read(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(HEADER_END);
      if (end < 0) return;
      status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1', 0, Math.min(end, 64)))?.[1] ?? 0);
      if (status !== 200) {
        // A refusal: its envelope follows the head; keep reading until the server closes.
        return;
      }
      const rest = head.subarray(end + HEADER_END.length);
      head = undefined;
      open++;
      settle(undefined);
      if (rest.length > 0) read(rest);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => settle(`network ${err.code ?? err.message}`));
    socket.on('close', () => {
      sockets.delete(socket);
      if (status !== 200 && head !== undefined) {
        const code = /"code":"([A-Z_]+)"/.exec(head.toString('utf8'))?.[1];
        settle(status === 0 ? 'network closed' : `${status}${code ? ` ${code}` : ''}`);
      }
      onGone();
    });
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
  for (const stream of resuming) stream.stop();
  resuming = [];
  for (const socket of sockets) socket.destroy();
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
      received.clear();
      return { type: 'dropped' };
    case 'received':
      return { type: 'received', streams: [...received] };
    case 'resumed':
      return { type: 'resumed', streams: resuming.map((s) => s.record) };
    case 'close':
      for (const stream of resuming) stream.stop();
      for (const socket of sockets) socket.destroy();
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
