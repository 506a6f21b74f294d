import { ChatTokenRejectedError, type AppendMessageRequest, type ChatClient, type NotificationResponse, type StreamOptions } from '@chat/client';
import type { BotContext, BotHandler, BotLogger } from './bot-options.ts';
import { InboxAcknowledger } from './inbox-acknowledger.ts';
import type { MessageLocator } from './message-locator.ts';
import { replyIdempotencyKey } from './reply-key.ts';

/** What one repository's worker needs. */
export interface InboxWorkerDeps {
  client: ChatClient;
  locator: MessageLocator;
  handler: BotHandler;
  logger: BotLogger;
  ack: { every: number; intervalMs: number };
  handlerAttempts: { max: number; delayMs: number };
  onHandlerError: (error: unknown, notification: NotificationResponse) => void;
  stream: Omit<StreamOptions, 'signal'>;
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * One repository's inbox, handled in order: reads the acknowledged checkpoint, streams the
 * notifications after it, runs the handler for each (one at a time) and acknowledges in batches.
 * After a crash the next run starts again at the checkpoint, so the notifications handled but not
 * yet acknowledged are handled again; their replies carry the same keys and are not stored twice.
 * Resolves when `stopping` aborts (after the handler in hand and a final acknowledgement).
 */
export async function runInboxWorker(deps: InboxWorkerDeps, repositoryId: string, stopping: AbortSignal): Promise<void> {
  const { client } = deps;
  const checkpoint = (await client.listRepositoryInbox(repositoryId, { limit: 1, signal: stopping }).catch((err: unknown) => {
    if (stopping.aborted) return undefined;
    throw err;
  }))?.acknowledgedCursor;
  if (stopping.aborted) return;
  const acknowledger = new InboxAcknowledger(client, repositoryId, checkpoint ?? null, {
    ...deps.ack,
    onError: (error) => deps.logger.warn?.('acknowledgement failed; it is sent again with the next batch', { repositoryId, error: String(error) }),
  });
  deps.logger.info?.('inbox worker started', { repositoryId, checkpoint: checkpoint ?? null });
  const stream = client.streamInbox({ repositoryId, lastEventId: checkpoint ?? null }, deps.stream);
  const onStop = () => stream.close();
  stopping.addEventListener('abort', onStop, { once: true });
  try {
    for await (const event of stream) {
      const handled = await handleWithRetries(deps, event.data, stopping);
      // A notification whose handler was cut short by a stop stays unacknowledged: the next run handles it.
      if (!handled) break;
      await acknowledger.handled(event.id);
      if (stopping.aborted) break;
    }
  } finally {
    stopping.removeEventListener('abort', onStop);
    acknowledger.close();
    await acknowledger.flush();
  }
}

/**
 * Runs the handler for one notification until it succeeds or the attempts run out (true: the
 * notification is done with), or the bot stops between two attempts (false).
 */
async function handleWithRetries(deps: InboxWorkerDeps, notification: NotificationResponse, stopping: AbortSignal): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await handleOnce(deps, notification, stopping);
      return true;
    } catch (error) {
      // A refused token is no fault of this notification: the bot stops with it unacknowledged
      // rather than passing it over after the retries.
      if (error instanceof ChatTokenRejectedError) throw error;
      if (attempt >= deps.handlerAttempts.max) {
        deps.onHandlerError(error, notification);
        return true;
      }
      deps.logger.warn?.('handler failed; running it again', { notificationId: notification.notificationId, attempt, error: String(error) });
      await pause(deps.handlerAttempts.delayMs * 2 ** (attempt - 1), stopping);
      if (stopping.aborted) return false;
    }
  }
}

async function handleOnce(deps: InboxWorkerDeps, notification: NotificationResponse, stopping: AbortSignal): Promise<void> {
  const message = await deps.locator.find(notification);
  const room = notification.branchId ? { repositoryId: notification.repositoryId, branchId: notification.branchId } : { repositoryId: notification.repositoryId };
  let replies = 0;
  const context: BotContext = {
    notification,
    message,
    client: deps.client,
    signal: stopping,
    async reply(body: string | AppendMessageRequest) {
      const request = typeof body === 'string' ? { bodyMarkdown: body } : body;
      const idempotencyKey = await replyIdempotencyKey(notification.notificationId, replies++);
      return deps.client.appendMessage(room, request, { idempotencyKey });
    },
  };
  await deps.handler(context);
}
