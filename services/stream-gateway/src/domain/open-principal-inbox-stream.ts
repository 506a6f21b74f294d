import type { VerifiedPrincipal } from '@chat/authz-client';
import type { CursorCodec } from '@chat/contracts';
import type { FeedPrincipal, Store } from '@chat/store';
import type { InboxStreamTarget } from './open-inbox-stream.ts';
import { createPrincipalFeedSource, feedCursorBinding } from './principal-feed-source.ts';

/** The caller's feed (the inbox rule): a user token speaks for a human, a bot token for its bot. */
export function feedOwnerOf(principal: VerifiedPrincipal): FeedPrincipal {
  return { principalKind: principal.kind === 'bot' ? 'bot' : 'human', principalId: principal.id };
}

/**
 * Resolves what a principal-inbox stream reads, after authorization: the caller's feed and the seq
 * it starts after. A cursor names it (one of another principal, of another kind, or forged is
 * CURSOR_INVALID); without one the stream starts after the feed's acknowledged checkpoint, so a
 * client that restarts gets what it has not acknowledged. A feed never notified yet starts at 0.
 * @throws AppError CURSOR_INVALID, STORE_UNAVAILABLE
 */
export async function resolvePrincipalInboxTarget(
  deps: { store: Store; cursors: CursorCodec },
  input: { principal: VerifiedPrincipal; cursor: string | undefined; includeMessage: boolean },
): Promise<InboxStreamTarget> {
  const owner = feedOwnerOf(input.principal);
  const afterSeq =
    input.cursor === undefined ? ((await deps.store.principalFeeds.find(owner))?.ackSeq ?? 0) : deps.cursors.decode(feedCursorBinding(owner), input.cursor);
  return { source: createPrincipalFeedSource(deps, owner, { includeMessage: input.includeMessage }), afterSeq };
}
