import { ChatClient, ChatStreamError, type StreamStatus } from '@chat/client';
import type { ReceivedMessage } from '../harness/sse-resuming-client.ts';

/** What a consumer under test has done so far; the same shape in Node and in the browser page. */
export interface ConsumerRun {
  /** Events as the handler saw them, with the connection (count of `open` statuses) that delivered each. */
  received: ReceivedMessage[];
  statuses: Array<{ state: string; reason: string; delayMs?: number; code?: string }>;
  /** `forceRefresh` of every token request. */
  tokenRequests: boolean[];
  /** Set when the consumer stopped with an error. */
  stopped?: { name: string; reason?: string; message: string; cursor?: string };
  /** True once `run` settled. */
  done: boolean;
  cursor?: string;
}

/** How a test starts a stream consumer: the SDK's `streamRoom(...).run(handler)` with a token function. */
export interface ConsumerStart {
  baseUrl: string;
  repositoryId: string;
  token: string;
  lastEventId?: string;
  heartbeatIntervalMs: number;
}

export interface RunningConsumer {
  state(): Promise<ConsumerRun>;
  close(): Promise<void>;
}

/** Runs consumers somewhere: in this Node process, or in a Chromium page. */
export interface ConsumerDriver {
  name: string;
  start(options: ConsumerStart): Promise<RunningConsumer>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The consumer in this process. Its handler awaits a little before returning, so the cursor's
 * "advance after the handler" rule is exercised under every fault.
 */
export const nodeDriver: ConsumerDriver = {
  name: 'node',
  async start(options) {
    const run: ConsumerRun = { received: [], statuses: [], tokenRequests: [], done: false };
    let connection = 0;
    const client = new ChatClient({
      baseUrl: options.baseUrl,
      token: ({ forceRefresh }) => {
        run.tokenRequests.push(forceRefresh);
        return options.token;
      },
    });
    const stream = client.streamRoom(
      { repositoryId: options.repositoryId, lastEventId: options.lastEventId ?? null },
      {
        heartbeatIntervalMs: options.heartbeatIntervalMs,
        heartbeatTimeoutFactor: 3,
        backoff: { baseDelayMs: 100, maxDelayMs: 1000 },
        onStatus: (status: StreamStatus) => {
          if (status.reason === 'open') connection += 1;
          const error = status.error as { code?: string; cause?: { code?: string } } | undefined;
          const code = error?.code ?? error?.cause?.code;
          run.statuses.push({ state: status.state, reason: status.reason, ...(status.delayMs === undefined ? {} : { delayMs: status.delayMs }), ...(code ? { code } : {}) });
        },
      },
    );
    stream
      .run(async (event) => {
        await pause(Math.random() * 3);
        run.received.push({ id: event.id, data: JSON.stringify(event.data), connection });
      })
      .catch((error: unknown) => {
        const e = error as Error;
        run.stopped = { name: e.name, message: e.message, ...(error instanceof ChatStreamError ? { reason: error.reason, ...(error.cursor ? { cursor: error.cursor } : {}) } : {}) };
      })
      .finally(() => (run.done = true));
    return {
      state: async () => ({ ...run, ...(stream.cursor ? { cursor: stream.cursor } : {}) }),
      close: async () => stream.close(),
    };
  },
};
