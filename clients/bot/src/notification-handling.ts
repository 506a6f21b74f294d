import type { AppendMessageRequest, ChatClient, FeedNotificationResponse, NotificationResponse, StreamOptions } from '@chat/client';
import type { BotContext, BotHandler, BotLogger } from './bot-options.ts';
import { runHandlerAttempts, type HandlerAttemptPolicy } from './handler-attempts.ts';
import type { MessageLocator } from './message-locator.ts';
import { replyIdempotencyKey } from './reply-key.ts';

/** What a worker needs to handle notifications, whichever stream they come from. */
export interface HandlingDeps {
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
 * Runs the handler for one notification as `runHandlerAttempts` describes, reporting through the
 * logger. False when a stop cut it short: the notification stays unacknowledged.
 */
export async function handleNotification(deps: HandlingDeps, notification: NotificationResponse | FeedNotificationResponse, stopping: AbortSignal): Promise<boolean> {
  const { notificationId } = notification;
  return runHandlerAttempts(() => handleOnce(deps, notification, stopping), deps.handlerAttempts, stopping, {
    retrying: (error, attempt) => deps.logger.warn?.('handler failed; running it again', { notificationId, attempt, error: String(error) }),
    waitingForService: (error) => deps.logger.warn?.('the service is unavailable; the handler runs again until it answers', { notificationId, error: String(error) }),
    givingUp: (error) => deps.onHandlerError(error, notification),
  });
}

async function handleOnce(deps: HandlingDeps, delivered: NotificationResponse | FeedNotificationResponse, stopping: AbortSignal): Promise<void> {
  // A principal inbox stream opened with include=message hands the message with its notification;
  // otherwise it is found in its room.
  const { message: handed, ...notification } = delivered as FeedNotificationResponse;
  const message = handed ?? (await deps.locator.find(notification));
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
