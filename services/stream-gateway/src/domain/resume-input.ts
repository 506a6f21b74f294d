import { AppError } from '@chat/contracts';

/**
 * The resume point a client sent, still undecoded: `Last-Event-ID` and/or `?cursor=`. Both with
 * different values is CURSOR_CONFLICT; equal values are one cursor. A blank header counts as absent
 * (browsers send none before the first id); anything that is not a single string is CURSOR_INVALID.
 */
export function resumeCursor(lastEventIdHeader: unknown, cursorQuery: unknown): string | undefined {
  const header = lastEventIdHeader === undefined || (typeof lastEventIdHeader === 'string' && lastEventIdHeader.trim() === '') ? undefined : lastEventIdHeader;
  const query = cursorQuery;
  if (header !== undefined && query !== undefined && header !== query) {
    throw new AppError('CURSOR_CONFLICT', 'Last-Event-ID and cursor name different positions; send one.');
  }
  const chosen = header ?? query;
  if (chosen === undefined) return undefined;
  if (typeof chosen !== 'string') throw new AppError('CURSOR_INVALID', 'The cursor is invalid for this room or inbox.');
  return chosen;
}
