import type { VerifiedPrincipal } from '@chat/authz-client';
import type { StreamLease, StreamLeaseRegistry } from '@chat/stream-caps';
import type { CursorCodec } from '@chat/contracts';
import type { InboxOwner, Store } from '@chat/store';
import { createInboxSource, inboxCursorBinding } from './inbox-source.ts';
import { principalKey } from './scope-grant.ts';
import type { StreamSource } from './stream-source.ts';

export interface InboxStreamTarget {
  source: StreamSource;
  afterSeq: number;
}

/**
 * The caller's inbox in a repository (the API's rule): a user token speaks for a human, a bot token
 * for its bot. Nobody can stream another principal's inbox: the owner is always the caller.
 */
export function inboxOwnerOf(principal: VerifiedPrincipal, repositoryId: string): InboxOwner {
  return { repositoryId, principalKind: principal.kind === 'bot' ? 'bot' : 'human', principalId: principal.id };
}

/**
 * Resolves what an inbox stream reads, after authorization: the caller's inbox and the seq its cursor
 * names. A cursor of another inbox (principal or repository) or a forged one is CURSOR_INVALID.
 * Nothing is created: an inbox never notified yet replays nothing and goes live, so unlike a room
 * there is no materializing and no 409.
 * @throws AppError CURSOR_INVALID
 */
export function resolveInboxStreamTarget(
  deps: { store: Store; cursors: CursorCodec },
  input: { principal: VerifiedPrincipal; repositoryId: string; cursor: string | undefined },
): InboxStreamTarget {
  const owner = inboxOwnerOf(input.principal, input.repositoryId);
  const afterSeq = input.cursor === undefined ? 0 : deps.cursors.decode(inboxCursorBinding(owner), input.cursor);
  return { source: createInboxSource(deps, owner), afterSeq };
}

/**
 * Takes the caller's inbox-stream slot: inbox streams are capped per principal across all gateways
 * and repositories (`STREAM_CAP_INBOX_PER_PRINCIPAL`), apart from its room streams. The spec gives
 * the inbox stream no 429 (its statuses are 200, 400, 401, 403, 503), so a full cap answers 503
 * STREAM_UNAVAILABLE with Retry-After: a client backs off and retries as it does for any listener
 * outage, and the caller's open streams are left alone.
 * @throws AppError STREAM_UNAVAILABLE (cap reached, or the caps cannot be checked)
 */
export function reserveInboxStream(deps: { leases: StreamLeaseRegistry }, principal: VerifiedPrincipal): Promise<StreamLease> {
  return deps.leases.acquireInbox({ principalKey: principalKey(principal) });
}
