import type { VerifiedPrincipal } from '@chat/authz-client';
import type { CursorCodec, InboxPageResponse } from '@chat/contracts';
import type { FeedPrincipal, Store } from '@chat/store';
import { feedCursorBinding } from '@chat/wire-format';
import { presentFeedPage } from '../presenters/feed.presenter.ts';

/** The caller's feed: a user token speaks for a human, a bot token for its bot (as for inboxes). */
export function feedPrincipalOf(principal: VerifiedPrincipal): FeedPrincipal {
  return { principalKind: principal.kind === 'bot' ? 'bot' : 'human', principalId: principal.id };
}

export interface ListPrincipalInboxInput {
  principal: VerifiedPrincipal;
  /** The repositories the caller may read now, as core listed them for this request. */
  readable: ReadonlySet<string>;
  limit: number;
  cursor: string | undefined;
}

/**
 * listPrincipalInbox (extension): the caller's notifications in every repository, in feed order
 * (commit order across its inboxes), after the feed position `cursor` names. Rows of repositories the
 * caller may not read now are read but left out, so a page may hold fewer than `limit` items and
 * still move on past them. `nextCursor` is null only when the page read nothing.
 */
export async function listPrincipalInbox(deps: { store: Store; cursors: CursorCodec }, input: ListPrincipalInboxInput): Promise<InboxPageResponse> {
  const feed = feedPrincipalOf(input.principal);
  const afterSeq = input.cursor === undefined ? 0 : deps.cursors.decode(feedCursorBinding(feed), input.cursor);
  const rows = await deps.store.principalFeeds.listAfter(feed, afterSeq, input.limit);
  const found = await deps.store.principalFeeds.find(feed);
  return presentFeedPage(deps.cursors, feed, { rows, readable: input.readable, ackSeq: found?.ackSeq ?? 0 });
}
