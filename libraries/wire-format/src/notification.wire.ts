import type { CursorBinding, MessageResponse, Notification, NotificationResponse } from '@chat/contracts';
import type { InboxOwner, NotificationRow } from '@chat/store';

/** The cursor scope of an inbox: cursors of one principal's inbox in one repository work nowhere else. */
export function inboxCursorBinding(owner: InboxOwner): Extract<CursorBinding, { kind: 'inbox' }> {
  return { kind: 'inbox', repositoryId: owner.repositoryId, principalKind: owner.principalKind, principalId: owner.principalId };
}

/** The cursor scope of a principal's feed: its cursors work for that principal's feed only. */
export function feedCursorBinding(principal: {
  principalKind: 'human' | 'bot';
  principalId: string;
}): Extract<CursorBinding, { kind: 'feed' }> {
  return { kind: 'feed', principalKind: principal.principalKind, principalId: principal.principalId };
}

/**
 * The stored form of a notification (spec: Notification). It is the outbox payload of the
 * `notifications` channel; readers add `cursor` and `acknowledged` with `toNotificationResponse`.
 */
function toStoredNotification(row: NotificationRow): Notification {
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
  return withInboxPosition(toStoredNotification(row), cursor, row.seq <= ackSeq);
}

/** A stored notification as a reader sees it: with its inbox cursor and whether it is acknowledged. */
export function withInboxPosition(stored: Notification, cursor: string, acknowledged: boolean): NotificationResponse {
  return { ...stored, cursor, acknowledged };
}

/** Reads the data of a `notifications` backbone event; throws (naming `what`) on anything else. */
export function parseStoredNotification(data: string, what: string): Notification {
  const stored = JSON.parse(data) as Notification;
  if (typeof stored !== 'object' || stored === null || typeof stored.notificationId !== 'string') {
    throw new TypeError(`${what} is not a stored Notification`);
  }
  return stored;
}

/**
 * The data of a feed's event on the `notifications` channel (scope key `feed:<kind>:<id>`, seq the feed
 * seq): the stored notification and its seq in its own inbox, from which its inbox cursor is made.
 */
export interface FeedEntry {
  inboxSeq: number;
  notification: Notification;
  /** The notified message; absent from entries written without it (`NotificationAppendOptions.feedMessage`). */
  message?: MessageResponse;
}

/** Reads the data of a feed's backbone event; throws (naming `what`) on anything else. */
export function parseFeedEntry(data: string, what: string): FeedEntry {
  const entry = JSON.parse(data) as FeedEntry;
  if (
    typeof entry !== 'object' ||
    entry === null ||
    !Number.isSafeInteger(entry.inboxSeq) ||
    typeof entry.notification !== 'object' ||
    entry.notification === null ||
    typeof entry.notification.notificationId !== 'string'
  ) {
    throw new TypeError(`${what} is not a feed entry`);
  }
  return entry;
}

/** A notification as its stored JSON: the outbox payload and backbone data of the `notifications` channel. */
export function storedNotificationJson(row: NotificationRow): string {
  return JSON.stringify(toStoredNotification(row));
}
