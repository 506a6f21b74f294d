import type { VerifiedPrincipal } from '@chat/authz-client';
import { AcknowledgeInboxRequestSchema, AppError, type AcknowledgeInboxResponse, type CursorCodec } from '@chat/contracts';
import { FeedCheckpointStaleError, FeedPositionUnavailableError, type Store } from '@chat/store';
import { feedCursorBinding } from '@chat/wire-format';
import { presentFeedCheckpoint } from '../presenters/feed.presenter.ts';
import { feedPrincipalOf } from './list-principal-inbox.ts';

export interface AcknowledgePrincipalInboxInput {
  principal: VerifiedPrincipal;
  /** The parsed JSON body, not yet validated. */
  body: unknown;
}

/**
 * acknowledgePrincipalInbox (extension), with acknowledgeRepositoryInbox's rules in its order: the
 * body is an AcknowledgeInboxRequest (else REQUEST_INVALID); both cursors are feed cursors of the
 * caller (else CURSOR_INVALID); a notification of the feed is at `throughCursor` (else 404);
 * `expectedCursor`, when present, is the feed checkpoint, null meaning none yet (else
 * INBOX_CHECKPOINT_STALE); a position at or behind the checkpoint is a replay. The store moves the
 * feed checkpoint by compare-and-set and, with it, each repository inbox's checkpoint through its
 * notifications at or below the position; a per-repository acknowledgement leaves the feed's alone.
 */
export async function acknowledgePrincipalInbox(
  deps: { store: Store; cursors: CursorCodec },
  input: AcknowledgePrincipalInboxInput,
): Promise<AcknowledgeInboxResponse> {
  const parsed = AcknowledgeInboxRequestSchema.safeParse(input.body);
  if (!parsed.success) throw new AppError('REQUEST_INVALID', 'The body must be an AcknowledgeInboxRequest.');
  const feed = feedPrincipalOf(input.principal);
  const binding = feedCursorBinding(feed);
  const throughSeq = deps.cursors.decode(binding, parsed.data.throughCursor);
  const { expectedCursor } = parsed.data;
  const expectedSeq = expectedCursor === undefined ? undefined : expectedCursor === null ? 0 : deps.cursors.decode(binding, expectedCursor);
  try {
    const { ackSeq, replayed } = await deps.store.principalFeeds.acknowledge(feed, { throughSeq, ...(expectedSeq === undefined ? {} : { expectedSeq }) });
    return { acknowledgedCursor: presentFeedCheckpoint(deps.cursors, feed, ackSeq)!, replayed };
  } catch (err) {
    if (err instanceof FeedPositionUnavailableError) throw new AppError('RESOURCE_NOT_FOUND', 'No such notification in this feed.', { cause: err });
    if (err instanceof FeedCheckpointStaleError) throw new AppError('INBOX_CHECKPOINT_STALE', 'expectedCursor is not the current checkpoint.', { cause: err });
    throw err;
  }
}
