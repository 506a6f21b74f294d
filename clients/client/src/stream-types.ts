import type { BackoffOptions } from './client-options.ts';
import type { ChatApiError, ChatStreamError } from './chat-errors.ts';
import type { FeedNotificationResponse, MessageResponse, NotificationResponse } from './contract-types.ts';

/** A `message` event of a room stream; `id` is its durable cursor (also valid as a list `cursor`). */
export interface RoomMessageEvent {
  type: 'message';
  id: string;
  data: MessageResponse;
}

/** A `notification` event of an inbox stream; `id` is its durable inbox cursor (valid as `throughCursor`). */
export interface InboxNotificationEvent {
  type: 'notification';
  id: string;
  data: NotificationResponse;
}

/** A `notification` event of the principal inbox stream: `data.message` is there when asked for (`includeMessage`). */
export interface FeedNotificationEvent {
  type: 'notification';
  id: string;
  data: FeedNotificationResponse;
}

/** Connection state of a stream consumer. */
export type StreamState = 'connecting' | 'open' | 'backoff' | 'closed';

/** What the consumer is doing and why; passed to {@link StreamOptions.onStatus} for logs and UIs. */
export interface StreamStatus {
  state: StreamState;
  /**
   * Why the state changed: `start`, `open`, `heartbeat`, `handoff`, `reauthorize`, `silence` (no
   * bytes for longer than the heartbeat timeout), `ended` (server closed), `network`, `http_<status>`,
   * `closed` (by the caller) or `stopped` (terminal error).
   */
  reason: string;
  /** Reconnect attempts since the last healthy connection. */
  attempt: number;
  /** Wait before the next connection, in backoff. */
  delayMs?: number;
  /** The error behind a reconnect or stop, when there is one. */
  error?: ChatApiError | ChatStreamError | Error;
  /** The last fully processed event ID at this moment. */
  cursor: string | undefined;
}

/** Options of a stream consumer. */
export interface StreamOptions {
  /** The server's heartbeat interval (the gateway's `GATEWAY_HEARTBEAT_MS`). @defaultValue 15000 */
  heartbeatIntervalMs?: number;
  /**
   * Silence (no bytes at all, heartbeats included) longer than this many heartbeat intervals counts
   * as a dead connection and leads to a reconnect from the cursor. @defaultValue 3
   */
  heartbeatTimeoutFactor?: number;
  /** Reconnect backoff; reset after a durable event is processed. @defaultValue `{ baseDelayMs: 200, maxDelayMs: 5000 }` */
  backoff?: BackoffOptions;
  /** Reconnect attempts in a row without a processed event before stopping with `retries_exhausted`. @defaultValue Infinity */
  maxReconnectAttempts?: number;
  /** Longest `Retry-After` honoured; a 429 asking for longer waits this long. @defaultValue 60000 */
  maxRetryAfterMs?: number;
  /** Aborting it closes the stream like {@link ChatEventStream.close}. */
  signal?: AbortSignal;
  /** Called on every state change and control event (never with message data). */
  onStatus?: (status: StreamStatus) => void;
}

/** Where a room stream starts. */
export interface RoomStreamTarget {
  repositoryId: string;
  branchId?: string | null;
  /** The last fully processed event ID of an earlier consumer; absent starts from the server's replay. */
  lastEventId?: string | null;
}

/** Where an inbox stream starts. */
export interface InboxStreamTarget {
  repositoryId: string;
  /** The last fully processed notification cursor, e.g. the inbox's `acknowledgedCursor`. */
  lastEventId?: string | null;
}

/** Where a stream of the caller's feed (all its repositories) starts. */
export interface PrincipalInboxStreamTarget {
  /** The last fully processed feed cursor; absent starts after the feed's acknowledged checkpoint. */
  lastEventId?: string | null;
  /** Each event carries the notified message (`data.message`), so reading it costs no request. @defaultValue false */
  includeMessage?: boolean;
}
