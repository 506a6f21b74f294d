/** The IPC protocol between the bench run and its load-client processes (sse-load-worker.ts). */

/** One stream to open: the full URL and the bearer token to present. */
export interface StreamTarget {
  url: string;
  token: string;
  /** Names the stream in `received` replies (`ids` mode). */
  key?: string;
}

/**
 * `count`: message frames only; `latency`: also the send time in each body; `ids`: also each
 * message's `messageId`, kept per stream in arrival order for a loss / duplicate / order check;
 * `resume`: `ids`, and a stream that ends or is refused reconnects as the SDK does (at once after
 * `handoff`, after `Retry-After` plus jitter on 429 / 503, after a jittered backoff otherwise) with
 * `Last-Event-ID`, keeping a {@link ResumeRecord}; the latency histogram holds commit (`createdAt`) →
 * receipt of the streams still on their first connection.
 */
export type MeasureMode = 'count' | 'latency' | 'ids' | 'resume';

/** What one `resume`-mode stream went through; times are wall-clock milliseconds (Date.now). */
export interface ResumeRecord {
  key: string;
  /** messageIds in arrival order, across every connection. */
  ids: string[];
  /** When each connection was answered 200. */
  opens: number[];
  /**
   * For each connection after the first: when it had received every message committed before it
   * opened (the latest receipt of a message whose createdAt precedes the open), or its open time
   * when it owed none. One entry per connection, in step with `opens` (the first is its open).
   */
  caughtUp: number[];
  /** When each connection ended, and whether a `handoff` ended it. */
  ends: Array<{ at: number; handoff: boolean }>;
  /** Each refused attempt: `<status> <error code>`, plus ` without Retry-After` when it had none; or `network <error>`. */
  refusals: Array<{ at: number; what: string }>;
}

export type WorkerCommand =
  | { type: 'open'; targets: StreamTarget[]; concurrency: number; measure: MeasureMode }
  | { type: 'reset' }
  | { type: 'report' }
  /** Drops every stream of this worker and answers once they are gone; the worker stays. */
  | { type: 'drop' }
  /** The messageIds each `ids`-mode stream received, by target key. */
  | { type: 'received' }
  /** What each `resume`-mode stream went through. */
  | { type: 'resumed' }
  | { type: 'close' };

export type WorkerReply =
  | { type: 'opened'; opened: number; failures: Record<string, number>; ms: number }
  | {
      type: 'report';
      events: number;
      elapsedMs: number;
      /** Streams answered 200 and still open. */
      open: number;
      /** Streams that were open and have since ended or broken. */
      ended: number;
      /** Latency histogram since the last reset: [bucket, count] pairs, bucket = floor(ms / BUCKET_MS). */
      histogram: Array<[number, number]>;
      cpuMs: number;
    }
  | { type: 'dropped' }
  | { type: 'received'; streams: Array<[key: string, messageIds: string[]]> }
  | { type: 'resumed'; streams: ResumeRecord[] }
  | { type: 'closed' };

/** Width of one latency histogram bucket in milliseconds. */
export const BUCKET_MS = 0.05;
