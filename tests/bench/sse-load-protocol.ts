/** The IPC protocol between the bench run and its load-client processes (sse-load-worker.ts). */

/** One stream to open: the full URL and the bearer token to present. */
export interface StreamTarget {
  url: string;
  token: string;
}

export type MeasureMode = 'count' | 'latency';

export type WorkerCommand =
  | { type: 'open'; targets: StreamTarget[]; concurrency: number; measure: MeasureMode }
  | { type: 'reset' }
  | { type: 'report' }
  /** Drops every stream of this worker and answers once they are gone; the worker stays. */
  | { type: 'drop' }
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
  | { type: 'closed' };

/** Width of one latency histogram bucket in milliseconds. */
export const BUCKET_MS = 0.05;
