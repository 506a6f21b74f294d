import type { VerifiedPrincipal } from '@chat/authz-client';
import type { CursorCodec, InboxPageResponse } from '@chat/contracts';
import { inboxKey, type InboxOwner, type Store } from '@chat/store';
import { inboxCursorBinding, presentInboxPage } from '../presenters/notification.presenter.ts';

/** The caller's inbox in a repository: a user token speaks for a human, a bot token for its bot. */
export function inboxOwnerOf(principal: VerifiedPrincipal, repositoryId: string): InboxOwner {
  return { repositoryId, principalKind: principal.kind === 'bot' ? 'bot' : 'human', principalId: principal.id };
}

export interface ListInboxInput {
  owner: InboxOwner;
  limit: number;
  cursor: string | undefined;
}

/**
 * listRepositoryInbox: the caller's notifications oldest first (inbox seq order, which is
 * (createdAt, notificationId) order), each with its cursor and `acknowledged`, and the checkpoint.
 * A cursor names the last notification already seen and is bound to this very inbox.
 */
export async function listInbox(deps: { store: Store; cursors: CursorCodec }, input: ListInboxInput): Promise<InboxPageResponse> {
  const afterSeq = input.cursor === undefined ? 0 : deps.cursors.decode(inboxCursorBinding(input.owner), input.cursor);
  const key = inboxKey(input.owner);
  const rows = await deps.store.notifications.listAfter(key, afterSeq, input.limit + 1);
  const inbox = await deps.store.inboxes.findByKey(key);
  return presentInboxPage(deps.cursors, input.owner, {
    rows: rows.slice(0, input.limit),
    hasMore: rows.length > input.limit,
    ackSeq: inbox?.ackSeq ?? 0,
  });
}
