import type { CursorCodec, Webhook, WebhookDeadLetter } from '@chat/contracts';
import type { FeedPrincipal, WebhookDeadLetter as StoredDeadLetter, WebhookRow } from '@chat/store';
import { presentNotification } from './notification.presenter.ts';

/** A webhook as its principal sees it: never its secret. */
export function presentWebhook(row: WebhookRow): Webhook {
  return { webhookId: row.webhookId, url: row.url, createdAt: row.createdAt.toISOString() };
}

/**
 * A dead letter with its notification as the notification's repository inbox shows it (its inbox
 * cursor; acknowledged at or below `inboxAckSeq`, that inbox's checkpoint).
 */
export function presentDeadLetter(cursors: CursorCodec, principal: FeedPrincipal, letter: StoredDeadLetter, inboxAckSeq: number): WebhookDeadLetter {
  const { deadLetter, notification } = letter;
  return {
    deliveryId: deadLetter.deliveryId,
    state: deadLetter.state,
    attempts: deadLetter.attempts,
    lastError: deadLetter.lastError,
    deadAt: deadLetter.deadAt.toISOString(),
    notification: presentNotification(cursors, { repositoryId: notification.repositoryId, ...principal }, notification, inboxAckSeq),
  };
}
