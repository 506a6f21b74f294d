import type { CursorCodec } from '@chat/contracts';
import type { NotificationRow, WebhookRow } from '@chat/store';
import { inboxCursorBinding, toNotificationResponse } from '@chat/wire-format';
import { deliveryIdOf } from './delivery-signature.ts';

/** A delivery ready to send: its ID and its JSON body, `{ deliveryId, event, webhookId, notification }`. */
export interface DeliveryContent {
  deliveryId: string;
  body: string;
}

/**
 * The body of a notification's delivery to a webhook: the notification as the principal's inbox
 * lists it (with its repository inbox cursor, so the receiver can acknowledge through it), under a
 * delivery ID that is the same on every retry and redelivery.
 */
export function deliveryContent(cursors: CursorCodec, webhook: WebhookRow, notification: NotificationRow, inboxAckSeq: number): DeliveryContent {
  const owner = { repositoryId: notification.repositoryId, principalKind: webhook.principalKind, principalId: webhook.principalId };
  const deliveryId = deliveryIdOf(webhook.webhookId, notification.notificationId);
  const body = JSON.stringify({
    deliveryId,
    event: 'notification',
    webhookId: webhook.webhookId,
    notification: toNotificationResponse(notification, inboxAckSeq, cursors.encode(inboxCursorBinding(owner), notification.seq)),
  });
  return { deliveryId, body };
}
