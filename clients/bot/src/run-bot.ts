import { setMaxListeners } from 'node:events';
import { ChatClient, ChatStreamError, ChatTokenRejectedError } from '@chat/client';
import type { BotHandle, BotLogger, BotOptions } from './bot-options.ts';
import { connectionBoundedFetch } from './bounded-fetch.ts';
import { runFeedWorker } from './feed-worker.ts';
import { runInboxWorker } from './inbox-worker.ts';
import { MessageLocator } from './message-locator.ts';

const DEFAULTS = { ackEvery: 50, ackIntervalMs: 1000, maxHandlerAttempts: 3, handlerRetryDelayMs: 500, concurrency: 8, maxConnections: 4, stopSignals: ['SIGTERM', 'SIGINT'] as NodeJS.Signals[] };

/** Notifications a feed worker takes ahead of the handled ones, per handler slot. */
const AHEAD_PER_HANDLER = 64;

const stderrLogger: BotLogger = {
  warn: (message, fields) => process.stderr.write(`bot warning: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`),
  error: (message, fields) => process.stderr.write(`bot error: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`),
};

const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/**
 * The token refusal behind a worker's failure, whether a REST call or the inbox stream met it: a
 * bot resumes from its acknowledged checkpoint, so the stream's cursor is of no use to its owner,
 * and one error type tells every refused token.
 */
function tokenRefusalOf(error: unknown): ChatTokenRejectedError | undefined {
  if (error instanceof ChatTokenRejectedError) return error;
  if (error instanceof ChatStreamError && error.cause instanceof ChatTokenRejectedError) return error.cause;
  return undefined;
}

/**
 * Runs a bot: without `repositories`, one worker follows the bot's feed (every repository where it
 * holds a grant, in one stream, a repository's notifications in order); with them, one worker per
 * repository consumes the bot's inbox there (in order). Either way it calls `handler`
 * with each notification's message and a crash-safe `reply()`, and acknowledges in batches. On one
 * of `stopSignals` (SIGTERM, Ctrl-C) or `stop()`, each worker finishes the handler in hand,
 * acknowledges and ends; `done` then resolves and the process can exit 0. When the service refuses
 * the token (also the fresh one a token function gave when asked again), every worker stops the same
 * way and `done` rejects with {@link ChatTokenRejectedError}; the notifications in hand stay
 * unacknowledged, so a bot started again with a good token handles them.
 *
 * @example
 * const bot = runBot({
 *   baseUrl: 'http://127.0.0.1:8080', token: () => readFile('bot.token', 'utf8'),
 *   handler: async ({ message, reply }) => { await reply(`you said: ${message.bodyMarkdown}`); },
 * });
 * await bot.done.catch((err) => { console.error(err.message); process.exitCode = 1; });
 */
export function runBot(options: BotOptions): BotHandle {
  const { repositories } = options;
  if (repositories !== undefined) {
    if (repositories.length === 0) throw new TypeError('runBot: repositories must name at least one repository (or be left out to follow every granted one)');
    for (const id of repositories) if (!ULID.test(id)) throw new TypeError(`runBot: ${JSON.stringify(id)} is not a canonical repository ULID`);
    if (new Set(repositories).size !== repositories.length) throw new TypeError('runBot: a repository is named twice');
  }
  const concurrency = options.concurrency ?? DEFAULTS.concurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError('runBot: concurrency must be a positive integer');
  const logger = options.logger ?? stderrLogger;
  const maxConnections = Math.max(options.maxConnections ?? DEFAULTS.maxConnections, repositories === undefined ? 2 : repositories.length + 2);
  if (!Number.isInteger(maxConnections)) throw new TypeError('runBot: maxConnections must be an integer');
  const transport = options.client ? undefined : connectionBoundedFetch(maxConnections);
  const client =
    options.client ?? new ChatClient({ baseUrl: options.baseUrl, token: options.token, allowInsecureHttp: options.allowInsecureHttp === true, fetch: transport!.fetch });
  const stopping = new AbortController();
  // Every worker and every handler's pause listens for the stop: one listener per repository at least.
  setMaxListeners(0, stopping.signal);
  const deps = {
    client,
    locator: new MessageLocator(client),
    handler: options.handler,
    logger,
    ack: { every: options.ackEvery ?? DEFAULTS.ackEvery, intervalMs: options.ackIntervalMs ?? DEFAULTS.ackIntervalMs },
    handlerAttempts: { max: options.maxHandlerAttempts ?? DEFAULTS.maxHandlerAttempts, delayMs: options.handlerRetryDelayMs ?? DEFAULTS.handlerRetryDelayMs },
    onHandlerError:
      options.onHandlerError ??
      ((error: unknown, notification: { notificationId: string }) =>
        logger.error?.('handler failed for good; the notification is acknowledged without it', { notificationId: notification.notificationId, error: String(error) })),
    stream: options.stream ?? {},
  };

  const stop = () => stopping.abort();
  const signals = options.stopSignals ?? DEFAULTS.stopSignals;
  for (const signal of signals) process.on(signal, stop);
  options.signal?.addEventListener('abort', stop, { once: true });

  const runs =
    repositories === undefined
      ? [runFeedWorker(deps, { handlers: concurrency, ahead: concurrency * AHEAD_PER_HANDLER }, stopping.signal)]
      : repositories.map((repositoryId) => runInboxWorker(deps, repositoryId, stopping.signal));
  const workers = runs.map((run) =>
    run.catch((error: unknown) => {
      // One worker failing for good stops the others cleanly, then `done` rejects with its error.
      stop();
      throw tokenRefusalOf(error) ?? error;
    }),
  );
  const done = Promise.all(workers).then(
    () => undefined,
    async (error: unknown) => {
      await Promise.allSettled(workers);
      throw error;
    },
  );
  const settled = done.finally(async () => {
    for (const signal of signals) process.off(signal, stop);
    options.signal?.removeEventListener('abort', stop);
    await transport?.close().catch(() => undefined);
  });
  settled.catch(() => undefined);
  return {
    done: settled,
    async stop() {
      stop();
      await settled.catch(() => undefined);
    },
  };
}
