import type { AppendMessageRequest, ChatClient, NotificationResponse, StreamOptions } from '@chat/client';
import type { BotContext, BotHandler, BotLogger } from './bot-options.ts';
import { runHandlerAttempts, type HandlerAttemptPolicy } from './handler-attempts.ts';
import { InboxAcknowledger } from './inbox-acknowledger.ts';
import type { MessageLocator } from './message-locator.ts';
import { replyIdempotencyKey } from './reply-key.ts';

/** What one repository's worker needs. */
interface InboxWorkerDeps {
  client: ChatClient;
  locator: MessageLocator;
  handler: BotHandler;
  logger: BotLogger;
  ack: { every: number; intervalMs: number };
  handlerAttempts: HandlerAttemptPolicy;
  onHandlerError: (error: unknown, notification: NotificationResponse) => void;
  stream: Omit<StreamOptions, 'signal'>;
}

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

/** Runs the handler for one notification as `runHandlerAttempts` describes, reporting through the logger. */
async function handleWithRetries(deps: InboxWorkerDeps, notification: NotificationResponse, stopping: AbortSignal): Promise<boolean> {
  const { notificationId } = notification;
  return runHandlerAttempts(() => handleOnce(deps, notification, stopping), deps.handlerAttempts, stopping, {
    retrying: (error, attempt) => deps.logger.warn?.('handler failed; running it again', { notificationId, attempt, error: String(error) }),
    waitingForService: (error) => deps.logger.warn?.('the service is unavailable; the handler runs again until it answers', { notificationId, error: String(error) }),
    givingUp: (error) => deps.onHandlerError(error, notification),
  });
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
