import { AppError, type CursorCodec, type SearchPageResponse } from '@chat/contracts';
import type { VerifiedPrincipal } from '@chat/authz-client';
import { highlightFragments, placeBudget, SearchTimeoutError, type AppendRateLimit, type SearchHit, type SearchPosition, type Store } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import { decodeSearchCursor, encodeSearchCursor, searchBinding } from './search-cursor.ts';
import type { ParsedSearchQuery, SearchOrder } from './search-query.ts';

/** How long one search may run in the database before it fails (SearchTimeoutError). */
export const SEARCH_TIMEOUT_MS = 2000;

/**
 * A search's budget key: one per principal across repositories, in the append rate windows but
 * apart from every room's (no room's scope key is this).
 */
export const SEARCH_RATE_KEY = 'search';

export interface SearchMessagesInput {
  principal: VerifiedPrincipal;
  repositoryId: string;
  /** The single-room forms: the repository room (null) or a branch's; absent for the whole repository. */
  room?: { branchId: string | null };
  query: ParsedSearchQuery;
  order: SearchOrder;
  limit: number;
  cursor: string | undefined;
}

/**
 * searchRepository / searchRepositoryRoom / searchBranchRoom (extension): a page of the messages of
 * the repository's rooms (or of one) that match the query, with each message's room, its durable
 * cursor and highlighted fragments. The caller was authorized on the repository or room before
 * this runs; the store only ever looks in rooms of `repositoryId`. A search takes a unit of the
 * caller's search budget (the append rate limit's size and window) once the request is known to be
 * well formed, and runs for at most SEARCH_TIMEOUT_MS.
 */
export async function searchMessages(
  deps: { store: Store; cursors: CursorCodec; clock: () => Date; rateLimit: AppendRateLimit },
  input: SearchMessagesInput,
): Promise<SearchPageResponse> {
  const { query, order, limit } = input;
  if (input.room && query.branchId !== undefined) throw new AppError('REQUEST_INVALID', 'in: is for a search of the whole repository, not of one room.');
  const branchId = input.room ? input.room.branchId : query.branchId;
  const binding = searchBinding([input.repositoryId, input.room?.branchId, query, order]);
  const position = input.cursor === undefined ? undefined : decodeSearchCursor(input.cursor, order, binding);

  const now = deps.clock().getTime();
  const placed = placeBudget({ ...deps.rateLimit, per: 'sender' }, { senderKind: input.principal.kind, senderId: input.principal.id }, SEARCH_RATE_KEY, now);
  const budget = { ...placed.budget, roomKey: SEARCH_RATE_KEY };
  if (!(await deps.store.rateWindows.take(budget))) {
    throw new AppError('RATE_LIMITED', 'Too many searches; retry after Retry-After seconds.', { retryAfterSeconds: Math.max(1, Math.ceil(placed.retryAfterMs / 1000)) });
  }

  let page;
  try {
    page = await deps.store.messages.search({
      repositoryId: input.repositoryId,
      ...(branchId === undefined ? {} : { branchId }),
      terms: query.terms,
      phrases: query.phrases,
      senderIds: query.senderIds,
      mentionIds: query.mentionIds,
      ...(query.before ? { before: query.before } : {}),
      ...(query.after ? { after: query.after } : {}),
      hasCode: query.hasCode,
      hasLink: query.hasLink,
      order,
      limit,
      ...(position ? { position } : {}),
      timeoutMs: SEARCH_TIMEOUT_MS,
    });
  } catch (err) {
    if (err instanceof SearchTimeoutError) {
      throw new AppError('STORE_UNAVAILABLE', `The search ran past its time bound of ${SEARCH_TIMEOUT_MS} ms; narrow it with more words or filters.`, { cause: err });
    }
    throw err;
  }
  const needles = [...query.terms, ...query.phrases];
  const last = page.hits.at(-1);
  return {
    items: page.hits.map(({ message }) => ({
      message: toMessageResponse(message),
      roomId: message.roomId,
      branchId: message.branchId,
      cursor: deps.cursors.encode({ kind: 'room', roomId: message.roomId }, message.seq),
      highlights: highlightFragments(message.bodyMarkdown, needles),
    })),
    nextCursor: page.hasMore && last ? encodeSearchCursor(positionAfter(order, last), binding) : null,
  };
}

function positionAfter(order: SearchOrder, hit: SearchHit): SearchPosition {
  return order === 'newest'
    ? { order, createdAtMs: hit.message.createdAt.getTime(), messageId: hit.message.messageId }
    : { order, score: hit.score, messageId: hit.message.messageId };
}
