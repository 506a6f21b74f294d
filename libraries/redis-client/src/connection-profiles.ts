/**
 * Who a connection serves, which fixes how it behaves when Redis is slow or away:
 * - `backbone`: the backbone's commands (publish, trim, acks, ping);
 * - `backbone-blocking`: one of the backbone's blocking readers (XREAD or XREADGROUP with BLOCK);
 * - `stream-leases`: the stream-cap leases, which answer a request that is waiting;
 * - `job-queue`: the webhook delivery queue (BullMQ), whose workers block waiting for jobs.
 */
export type RedisConnectionProfile = 'backbone' | 'backbone-blocking' | 'stream-leases' | 'job-queue';

/** How a connection behaves when Redis is slow or away. */
export interface RedisClientTuning {
  /** Longest wait to connect to a node (and, on a Cluster, to read the slot map). */
  connectTimeoutMs: number;
  /**
   * Longest wait for one command's reply. Unset where the caller races every command against a
   * deadline of its own (`withDeadline`): blocking reads, and callers that spare the second timer.
   */
  commandTimeoutMs?: number;
  /** Reconnect attempts a command waits through before it fails (ioredis `maxRetriesPerRequest`); null: every one. */
  maxRetriesPerRequest: number | null;
  /** false: a command in flight when the connection dropped fails instead of being sent again. @defaultValue true */
  resendAfterReconnect?: boolean;
  /** Commands issued while (re)connecting wait for the connection instead of failing at once. */
  offlineQueue: boolean;
  /** Commands issued in one event-loop turn leave in one write per node. @defaultValue false */
  autoPipelining?: boolean;
  /** Cluster: how often the slot map is re-read when nothing (MOVED, a lost node) signalled a change. */
  slotsRefreshIntervalMs: number;
}

/**
 * The backbone's connections fail fast: nothing is silently re-sent after a reconnect, because a
 * late duplicate write is worse there than a clear error the caller can retry. Every command is
 * raced against a deadline by its caller (`withDeadlineOrReconnect`, which starts before the
 * command is issued and also drops a silent connection), so they set no per-command timeout of
 * their own: that second timer would never fire first and costs ~5 µs of CPU per command.
 */
function backboneTuning(timeoutMs: number): RedisClientTuning {
  return { connectTimeoutMs: timeoutMs, maxRetriesPerRequest: 1, resendAfterReconnect: false, offlineQueue: true, slotsRefreshIntervalMs: 10_000 };
}

/**
 * A blocking reader is tuned as the backbone's commands, and besides fails at once while
 * disconnected (no offline queue, no retry) and re-reads the Cluster slot map rarely: MOVED and
 * connection loss refresh it at once, the timer only catches quiet changes.
 */
function backboneBlockingTuning(timeoutMs: number): RedisClientTuning {
  return { ...backboneTuning(timeoutMs), maxRetriesPerRequest: 0, offlineQueue: false, slotsRefreshIntervalMs: 60_000 };
}

/**
 * The leases' connection fails fast: a command queued while Redis is away is failed after one
 * reconnect attempt instead of piling up, because a lease answers a request that is waiting.
 * Commands issued in one event-loop turn leave in one write per node: lease renewals go out side
 * by side. Connecting may take 500 ms however short the command timeout.
 */
function streamLeasesTuning(timeoutMs: number): RedisClientTuning {
  return {
    connectTimeoutMs: Math.max(timeoutMs, 500),
    commandTimeoutMs: timeoutMs,
    maxRetriesPerRequest: 1,
    offlineQueue: true,
    autoPipelining: true,
    slotsRefreshIntervalMs: 10_000,
  };
}

/**
 * BullMQ's connections wait through reconnects (it requires `maxRetriesPerRequest: null` of a
 * worker's blocking connection): a job queue's commands are retried by BullMQ itself, and the jobs
 * are safe in Redis meanwhile. No command timeout: BullMQ's blocking reads wait for jobs.
 */
function jobQueueTuning(timeoutMs: number): RedisClientTuning {
  return { connectTimeoutMs: Math.max(timeoutMs, 1000), maxRetriesPerRequest: null, offlineQueue: true, slotsRefreshIntervalMs: 10_000 };
}

const TUNING_OF: Record<RedisConnectionProfile, (timeoutMs: number) => RedisClientTuning> = {
  backbone: backboneTuning,
  'backbone-blocking': backboneBlockingTuning,
  'stream-leases': streamLeasesTuning,
  'job-queue': jobQueueTuning,
};

/** The tuning of a profile's connection, for a caller whose longest wait for one command is `timeoutMs`. */
export function tuningOf(profile: RedisConnectionProfile, timeoutMs: number): RedisClientTuning {
  return TUNING_OF[profile](timeoutMs);
}
