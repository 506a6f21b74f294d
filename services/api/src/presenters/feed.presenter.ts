import type { CursorCodec, InboxPageResponse } from '@chat/contracts';
import type { FeedNotificationRow, FeedPrincipal } from '@chat/store';
import { feedCursorBinding } from '@chat/wire-format';
import { presentNotification } from './notification.presenter.ts';

/** The feed checkpoint as a feed cursor, or null when nothing was acknowledged yet. */
export function presentFeedCheckpoint(cursors: CursorCodec, feed: FeedPrincipal, ackSeq: number): string | null {
  return ackSeq > 0 ? cursors.encode(feedCursorBinding(feed), ackSeq) : null;
}

/**
 * A page of the feed. Items are the rows of repositories in `readable`, each as its own inbox shows it
 * (its inbox cursor, acknowledged at or below its inbox's checkpoint); `nextCursor` is the feed
 * cursor of the last row read, shown or left out, so the next page goes on past both.
 */
export function presentFeedPage(
  cursors: CursorCodec,
  feed: FeedPrincipal,
  page: { rows: FeedNotificationRow[]; readable: ReadonlySet<string>; ackSeq: number },
): InboxPageResponse {
  const last = page.rows.at(-1);
  return {
    items: page.rows
      .filter((row) => page.readable.has(row.repositoryId))
      .map((row) => presentNotification(cursors, { repositoryId: row.repositoryId, ...feed }, row, row.inboxAckSeq)),
    nextCursor: last ? cursors.encode(feedCursorBinding(feed), last.feedSeq) : null,
    acknowledgedCursor: presentFeedCheckpoint(cursors, feed, page.ackSeq),
  };
}
