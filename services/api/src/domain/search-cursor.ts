/**
 * The search extension's page cursor: where the previous page ended in the page's order (its last
 * message's score or time, and its ID), and a digest of the search it belongs to (scope, query,
 * order), so a cursor of another search is CURSOR_INVALID rather than a page of something else.
 * It carries no authority: every page is searched within the caller's authorized scope, whatever
 * the cursor says, so it needs no MAC.
 */
import { createHash } from 'node:crypto';
import { AppError, isCanonicalUlid } from '@chat/contracts';
import type { SearchPosition } from '@chat/store';

const VERSION = 1;

/** What a cursor is bound to: the search whose pages it continues. */
export function searchBinding(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

export function encodeSearchCursor(position: SearchPosition, binding: string): string {
  const value = position.order === 'newest' ? position.createdAtMs : position.score;
  return Buffer.from(JSON.stringify([VERSION, position.order, value, position.messageId, binding])).toString('base64url');
}

/** The position `cursor` names in a search of `order` bound to `binding`; CURSOR_INVALID for anything else. */
export function decodeSearchCursor(cursor: string, order: SearchPosition['order'], binding: string): SearchPosition {
  let parsed: unknown;
  try {
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.toString('base64url') !== cursor) throw new Error('not canonical');
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) throw invalid();
  const [version, ordered, value, messageId, bound] = parsed as unknown[];
  if (version !== VERSION || ordered !== order || bound !== binding || !isCanonicalUlid(messageId) || typeof value !== 'number' || !Number.isFinite(value)) throw invalid();
  if (order === 'newest' && Number.isSafeInteger(value)) return { order, createdAtMs: value, messageId };
  if (order === 'relevance') return { order, score: value, messageId };
  throw invalid();
}

function invalid(): AppError {
  return new AppError('CURSOR_INVALID', 'cursor is not a cursor of this search.');
}
