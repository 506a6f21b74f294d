import { Agent, request } from 'node:http';
import { ulid } from 'ulid';
import { monotonicMs } from './monotonic-clock.ts';

export interface PacedWriterOptions {
  /** API base URLs, used in turn. */
  apiUrls: string[];
  /** Room message paths (`/v1/.../room/messages`), used in turn. */
  paths: string[];
  /** Bearer tokens of principals with write access, used in turn. */
  tokens: string[];
  /** Appends started per second. */
  ratePerSecond: number;
  /** Appends in flight at most; a due append beyond it is skipped (and counted), not queued. */
  maxInFlight: number;
  /** The Markdown body of the i-th append. @defaultValue `lat <monotonic ms at send>`, which the latency clients read back */
  bodyOf?: (i: number, sentAt: number) => string;
}

export interface WriterStats {
  sent: number;
  created: number;
  skipped: number;
  failures: Record<string, number>;
  seconds: number;
  appendsPerSecond: number;
  /** Milliseconds from sending each created append to its 201, in completion order. */
  roundTripsMs: number[];
}

export interface PacedWriter {
  /** Zeroes the counters (start of a measuring window). */
  reset(): void;
  /** Counters since start or the last reset, without stopping. */
  stats(): WriterStats;
  /** Stops sending and waits for the appends in flight. */
  stop(): Promise<WriterStats>;
}

/**
 * Open-loop append load at a steady rate: a send is due every 1/rate seconds whether or not earlier
 * ones returned, so a slow server shows up as latency rather than as a lower offered rate. Each body
 * is `lat <monotonic ms at send>`, which the latency clients read back, unless `bodyOf` says otherwise.
 */
export function startPacedWriter(options: PacedWriterOptions): PacedWriter {
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxInFlight });
  const started = monotonicMs();
  let windowStart = started;
  let due = 0;
  let sent = 0;
  let created = 0;
  let skipped = 0;
  let failures: Record<string, number> = {};
  let roundTripsMs: number[] = [];
  let inFlight = 0;
  let index = 0;
  let stopped = false;
  const idle: Array<() => void> = [];

  const fail = (key: string) => (failures[key] = (failures[key] ?? 0) + 1);
  const send = () => {
    const i = index++;
    const base = options.apiUrls[i % options.apiUrls.length]!;
    const path = options.paths[i % options.paths.length]!;
    const token = options.tokens[i % options.tokens.length]!;
    const sentAt = monotonicMs();
    const body = JSON.stringify({ bodyMarkdown: options.bodyOf ? options.bodyOf(i, sentAt) : `lat ${sentAt.toFixed(3)}` });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': ulid() };
    inFlight++;
    sent++;
    const done = (status: number | string) => {
      inFlight--;
      if (status === 201) {
        created++;
        roundTripsMs.push(monotonicMs() - sentAt);
      }
      else fail(String(status));
      if (inFlight === 0) for (const resolve of idle.splice(0)) resolve();
    };
    const attempt = (retryOnStaleSocket: boolean) => {
      const req = request(base + path, { method: 'POST', agent, headers });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed as idle just as it was reused (Node's documented
        // race): send it once more with the same key, as a client should (a 200 would count as a
        // failure, so a resend of something that had arrived stays visible).
        if (retryOnStaleSocket && req.reusedSocket && err.code === 'ECONNRESET') attempt(false);
        else done('network');
      });
      req.end(body);
    };
    attempt(true);
  };

  const timer = setInterval(() => {
    if (stopped) return;
    const target = Math.floor(((monotonicMs() - started) / 1000) * options.ratePerSecond);
    // Never burst to catch up more than 50 ms of schedule: that would distort the latency figure.
    if (target - due > options.ratePerSecond / 20) {
      skipped += target - due - Math.ceil(options.ratePerSecond / 20);
      due = target - Math.ceil(options.ratePerSecond / 20);
    }
    while (due < target) {
      due++;
      if (inFlight >= options.maxInFlight) skipped++;
      else send();
    }
  }, 2);

  const stats = (): WriterStats => {
    const seconds = (monotonicMs() - windowStart) / 1000;
    return { sent, created, skipped, failures: { ...failures }, seconds, appendsPerSecond: created / seconds, roundTripsMs: [...roundTripsMs] };
  };
  return {
    reset() {
      windowStart = monotonicMs();
      sent = created = skipped = 0;
      failures = {};
      roundTripsMs = [];
    },
    stats,
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
      agent.destroy();
      return stats();
    },
  };
}
