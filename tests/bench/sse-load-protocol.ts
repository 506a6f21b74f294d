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
 * message's `messageId`, kept per stream in arrival order for a loss / duplicate / order check.
 */
export type MeasureMode = 'count' | 'latency' | 'ids';

export type WorkerCommand =
  | { type: 'open'; targets: StreamTarget[]; concurrency: number; measure: MeasureMode }
  | { type: 'reset' }
  | { type: 'report' }
  /** Drops every stream of this worker and answers once they are gone; the worker stays. */
  | { type: 'drop' }
  /** The messageIds each `ids`-mode stream received, by target key. */
  | { type: 'received' }
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
  | { type: 'closed' };

/** Width of one latency histogram bucket in milliseconds. */
export const BUCKET_MS = 0.05;
