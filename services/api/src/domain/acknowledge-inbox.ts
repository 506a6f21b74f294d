import { AcknowledgeInboxRequestSchema, AppError, type AcknowledgeInboxResponse, type CursorCodec } from '@chat/contracts';
import { inboxKey, type InboxOwner, type Store } from '@chat/store';
import { inboxCursorBinding, presentCheckpoint } from '../presenters/notification.presenter.ts';

export interface AcknowledgeInboxInput {
  owner: InboxOwner;
  /** The parsed JSON body, not yet validated. */
  body: unknown;
}

function stale(): AppError {
  return new AppError('INBOX_CHECKPOINT_STALE', 'expectedCursor is not the current checkpoint.');
}

/**
 * acknowledgeRepositoryInbox. Rules, in order: the body is an AcknowledgeInboxRequest (else
 * REQUEST_INVALID); both cursors belong to the caller's inbox (else CURSOR_INVALID); the notification
 * `throughCursor` names exists in it (else 404); `expectedCursor`, when present, equals the current
 * checkpoint, null meaning none yet (else INBOX_CHECKPOINT_STALE); a cursor at or behind the checkpoint
 * is a replay that changes nothing; otherwise the checkpoint moves forward by compare-and-set, so of
 * racing acknowledgements from one expected checkpoint exactly one wins and the others are stale.
 */
export async function acknowledgeInbox(deps: { store: Store; cursors: CursorCodec }, input: AcknowledgeInboxInput): Promise<AcknowledgeInboxResponse> {
  const parsed = AcknowledgeInboxRequestSchema.safeParse(input.body);
  if (!parsed.success) throw new AppError('REQUEST_INVALID', 'The body must be an AcknowledgeInboxRequest.');
  const scope = inboxCursorBinding(input.owner);
  const throughSeq = deps.cursors.decode(scope, parsed.data.throughCursor);
  const { expectedCursor } = parsed.data;
  const expectedSeq = expectedCursor === undefined ? undefined : expectedCursor === null ? 0 : deps.cursors.decode(scope, expectedCursor);

  const key = inboxKey(input.owner);
  const notification = throughSeq > 0 ? await deps.store.notifications.findBySeq(key, throughSeq) : null;
  if (!notification) throw new AppError('RESOURCE_NOT_FOUND', 'No such notification in this inbox.');

  for (;;) {
    const inbox = await deps.store.inboxes.findByKey(key);
    const currentSeq = inbox?.ackSeq ?? 0;
    if (expectedSeq !== undefined && expectedSeq !== currentSeq) throw stale();
    if (throughSeq <= currentSeq) return { acknowledgedCursor: presentCheckpoint(deps.cursors, input.owner, currentSeq)!, replayed: true };
    if (await deps.store.inboxes.advanceAck(key, currentSeq, throughSeq)) {
      return { acknowledgedCursor: presentCheckpoint(deps.cursors, input.owner, throughSeq)!, replayed: false };
    }
    // Someone moved the checkpoint between the read and the write: with an expectation, this request
    // lost the race; without one, it is judged again against the new checkpoint.
    if (expectedSeq !== undefined) throw stale();
  }
}
