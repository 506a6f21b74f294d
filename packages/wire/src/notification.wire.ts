import type { Notification, NotificationResponse } from '@chat/contracts';
import type { NotificationRow } from './inbox.schema.ts';

/**
 * The stored form of a notification (spec: Notification). It is the outbox payload of the
 * `notifications` channel; readers add `cursor` and `acknowledged` with `toNotificationResponse`.
 */
export function toStoredNotification(row: NotificationRow): Notification {
  return {
    notificationId: row.notificationId,
    targetKind: row.targetKind,
    targetId: row.targetId,
    repositoryId: row.repositoryId,
    roomId: row.roomId,
    messageId: row.messageId,
    senderKind: row.senderKind,
    senderId: row.senderId,
    spans: row.spans.map((s) => ({ startByte: s.startByte, endByte: s.endByte })),
    createdAt: row.createdAt.toISOString(),
    branchId: row.branchId,
  };
}

/**
 * The wire form shared by inbox pages and `notification` stream events: acknowledged when the row's
 * seq is at or below the inbox checkpoint `ackSeq`; `cursor` is the row's inbox cursor.
 */
export function toNotificationResponse(row: NotificationRow, ackSeq: number, cursor: string): NotificationResponse {
  return { ...toStoredNotification(row), cursor, acknowledged: row.seq <= ackSeq };
}
