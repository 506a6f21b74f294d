import type { AppendMessageRequest, AppendResult, ChatClient, MessageResponse, NotificationResponse, StreamOptions, TokenProvider } from '@chat/client';

/** What a handler gets for one notification. */
export interface BotContext {
  /** The notification being handled. */
  notification: NotificationResponse;
  /** The message it points to (the one that mentions the bot). */
  message: MessageResponse;
  /**
   * Appends a reply to the message's room (its branch room when the message is in one). The n-th
   * reply of a notification always carries the same Idempotency-Key, derived from the notification,
   * so when the handler runs again after a crash the API answers 200 with the reply it already
   * stored (`created` false) instead of appending another. A handler must therefore reply with the
   * same text when it runs again for the same notification; a different text is refused with
   * `IDEMPOTENCY_KEY_REUSED` (the first reply stays the only one).
   */
  reply(body: string | AppendMessageRequest): Promise<AppendResult>;
  /** The bot's client, for anything else the handler needs. */
  client: ChatClient;
  /** Aborted when the bot is asked to stop; a long handler may finish early on it. */
  signal: AbortSignal;
}

/** A bot's logic: called once per notification, in inbox order per repository. */
export type BotHandler = (context: BotContext) => void | Promise<void>;

/** Where the runner reports what it does; every method is optional. */
export interface BotLogger {
  info?(message: string, fields?: Record<string, unknown>): void;
  warn?(message: string, fields?: Record<string, unknown>): void;
  error?(message: string, fields?: Record<string, unknown>): void;
}

/** Options of {@link runBot}. */
export interface BotOptions {
  /** Service base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /**
   * The bot's access token (bare, without `Bearer `), or a function that returns a fresh one. A bot
   * runs for hours: its token expires, and a restart of the core can invalidate it, so pass a
   * function (re-read a token file, or mint one). It is asked again once after the service refuses
   * the token; when that one is refused too, `done` rejects with `ChatTokenRejectedError`.
   */
  token: TokenProvider;
  /**
   * Repositories whose inbox the bot consumes (canonical ULIDs), each with its own ordered worker and
   * its own stream (at most `STREAM_CAP_INBOX_PER_PRINCIPAL` of them, 64 by default). Leave it out to
   * follow every repository where the bot holds a grant, through its feed in one stream: grants added
   * or revoked while it runs are followed without a restart. @defaultValue every granted repository
   */
  repositories?: string[];
  /**
   * Following the feed (no `repositories`): handlers running at once, each for a different
   * repository; a repository's notifications are always handled one at a time, in order.
   * @defaultValue 8
   */
  concurrency?: number;
  /** Called per notification. */
  handler: BotHandler;
  /**
   * Send the token over plain `http://` to a host that is not loopback; without it such a `baseUrl`
   * throws `ChatInsecureTransportError` from `runBot`. @defaultValue false
   */
  allowInsecureHttp?: boolean;
  /** A client to use instead of one made from `baseUrl` and `token` (e.g. with a custom fetch). */
  client?: ChatClient;
  /**
   * Connections the bot keeps open to the service, its streams included (the client made from
   * `baseUrl`; a `client` given brings its own). Requests beyond them wait for a free one. Listed
   * repositories need one each for their streams, so it is raised to `repositories.length + 2` then.
   * @defaultValue 4
   */
  maxConnections?: number;
  /** Acknowledge after this many handled notifications of a repository (or of the feed). @defaultValue 50 */
  ackEvery?: number;
  /** Acknowledge what was handled at least this often (milliseconds). @defaultValue 1000 */
  ackIntervalMs?: number;
  /**
   * Runs of the handler for one notification before the runner gives up on it, reports it to
   * `onHandlerError` and goes on with the next one. A run that failed because the service could
   * not be reached or was unavailable (`ChatNetworkError`, or 429, 502, 503, 504 after the client's
   * retries, also as a `cause`) counts none: the handler runs again, after a pause that doubles up
   * to 5 s, until the service answers or the bot stops, so a restart of the service skips no
   * mention. @defaultValue 3
   */
  maxHandlerAttempts?: number;
  /** Pause before running a failed handler again, doubled per attempt (and per wait for the service). @defaultValue 500 */
  handlerRetryDelayMs?: number;
  /**
   * Told of a notification whose handler failed `maxHandlerAttempts` times; it is acknowledged with
   * the others, so one poison message cannot hold up a repository. @defaultValue logs through `logger.error`
   */
  onHandlerError?: (error: unknown, notification: NotificationResponse) => void;
  /** Signals that stop the bot cleanly (finish the handler in hand, acknowledge, resolve `done`). @defaultValue ['SIGTERM', 'SIGINT'] */
  stopSignals?: NodeJS.Signals[];
  /** Inbox stream consumer options (heartbeat interval, backoff). */
  stream?: Omit<StreamOptions, 'signal'>;
  /** Aborting it stops the bot like {@link BotHandle.stop}. */
  signal?: AbortSignal;
  /** @defaultValue warnings and errors to stderr */
  logger?: BotLogger;
}

/** A running bot. */
export interface BotHandle {
  /** Stops every worker after its handler in hand, acknowledges what was handled, and resolves when done. */
  stop(): Promise<void>;
  /**
   * Resolves after a stop; rejects when a worker fails for good, after stopping the others cleanly:
   * with `ChatTokenRejectedError` when the service refuses the token (also the fresh one from a token
   * function), else with the SDK's error (`ChatNetworkError`, `ChatApiError`, `ChatStreamError`).
   */
  done: Promise<void>;
}
