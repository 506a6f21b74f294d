import { ChatApiError, ChatNetworkError, ChatStreamError } from '@chat/client';

/** What each error code means to the person using the viewer. */
const WORDS: Record<string, string> = {
  AUTHENTICATION_REQUIRED: 'You are not signed in.',
  TOKEN_REJECTED: 'Your sign-in is no longer accepted.',
  AUTHORIZATION_DENIED: 'You do not have permission to do this here.',
  AUTHORIZATION_UNAVAILABLE: 'Permissions cannot be checked right now; try again shortly.',
  ROOM_SEALED: 'This room is sealed: it can be read but no longer written to.',
  RATE_LIMITED: 'You are sending too fast.',
  MESSAGE_INVALID: 'The message was not accepted: it must be 1 to 16,384 bytes of text.',
  IDEMPOTENCY_KEY_REUSED: 'A different message was already sent under this send; write it again as a new message.',
  IDEMPOTENCY_KEY_INVALID: 'The send carried an invalid key.',
  MENTION_INVALID: 'A mention in the message is not valid.',
  MENTION_TARGET_INVALID: 'A mentioned person or bot cannot be mentioned here.',
  CORE_RESOURCE_TOKEN_REQUIRED: 'Mentions need core access that this sign-in does not have.',
  CORE_RESOURCE_TOKEN_REJECTED: 'Core refused the access used for mentions.',
  INBOX_CHECKPOINT_STALE: 'Your inbox changed elsewhere; it was refreshed.',
  RESOURCE_NOT_FOUND: 'That item no longer exists.',
  STORE_UNAVAILABLE: 'Messages cannot be stored right now; try again shortly.',
  STREAM_UNAVAILABLE: 'Live updates are unavailable right now.',
  STREAM_PRINCIPAL_LIMIT: 'You have too many live views open.',
  STREAM_ROOM_LIMIT: 'This room has too many live viewers right now.',
  CURSOR_INVALID: 'The position in this room is no longer valid.',
  SCOPE_INVALID: 'This address does not name a valid room.',
  LIMIT_INVALID: 'The page size was refused.',
  REQUEST_INVALID: 'The request was not understood.',
};

/** One sentence for the person, and the code and request ID to quote in a report. */
export function describeError(error: unknown): { text: string; detail: string | undefined } {
  if (error instanceof ChatApiError) {
    const text = WORDS[error.code] ?? `The chat service refused the request (${error.status}).`;
    return { text, detail: `${error.code}${error.requestId ? ` · request ${error.requestId}` : ''}` };
  }
  if (error instanceof ChatNetworkError) return { text: 'The chat service cannot be reached. Check your connection.', detail: undefined };
  if (error instanceof ChatStreamError) {
    if (error.cause) return describeError(error.cause);
    return { text: 'Live updates stopped.', detail: error.reason };
  }
  return { text: error instanceof Error ? error.message : String(error), detail: undefined };
}

/** A failed search: a query the service cannot read says what to check; anything else as {@link describeError}. */
export function describeSearchError(error: unknown): { text: string; detail: string | undefined } {
  const described = describeError(error);
  if (!(error instanceof ChatApiError && error.code === 'REQUEST_INVALID')) return described;
  return { ...described, text: 'The search could not be read: check its quotes and filters (from:, mentions:, in:, before:, after:, has:).' };
}
