import type { CursorCodec, InboxPageResponse, NotificationResponse } from '@chat/contracts';
import type { InboxOwner, NotificationRow } from '@chat/store';
import { inboxCursorBinding, toNotificationResponse } from '@chat/wire-format';

export { inboxCursorBinding };

/** One notification as the API shows it: its own cursor, and acknowledged when at or below the checkpoint. */
export function presentNotification(cursors: CursorCodec, owner: InboxOwner, row: NotificationRow, ackSeq: number): NotificationResponse {
  return toNotificationResponse(row, ackSeq, cursors.encode(inboxCursorBinding(owner), row.seq));
}

/** The checkpoint as a cursor, or null when nothing was acknowledged yet. */
export function presentCheckpoint(cursors: CursorCodec, owner: InboxOwner, ackSeq: number): string | null {
  return ackSeq > 0 ? cursors.encode(inboxCursorBinding(owner), ackSeq) : null;
}

/** A page of the inbox; `hasMore` says whether rows follow the last one shown. */
export function presentInboxPage(
  cursors: CursorCodec,
  owner: InboxOwner,
  page: { rows: NotificationRow[]; hasMore: boolean; ackSeq: number },
): InboxPageResponse {
  const last = page.rows.at(-1);
  return {
    items: page.rows.map((row) => presentNotification(cursors, owner, row, page.ackSeq)),
    nextCursor: page.hasMore && last ? cursors.encode(inboxCursorBinding(owner), last.seq) : null,
    acknowledgedCursor: presentCheckpoint(cursors, owner, page.ackSeq),
  };
}
