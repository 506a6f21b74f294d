import { AppError } from '@chat/contracts';
import { parseCursorParam } from './page-query.ts';

/** Where a history read starts: the newest messages, or relative to the message a cursor names. */
export type HistoryAnchor =
  | { kind: 'newest' }
  | { kind: 'before' | 'after' | 'at'; cursor: string };

const ANCHORS = ['before', 'after', 'at'] as const;

/**
 * The anchor of listRepositoryMessageHistory / listBranchMessageHistory from the query: at most one
 * of `before`, `after` and `at` (two are CURSOR_CONFLICT, since they name different pages), each one
 * opaque string (a repeated or empty one is CURSOR_INVALID, as `cursor` on the list).
 */
export function parseHistoryAnchor(query: Record<string, unknown>): HistoryAnchor {
  const present = ANCHORS.filter((name) => query[name] !== undefined);
  if (present.length > 1) throw new AppError('CURSOR_CONFLICT', 'Send at most one of before, after and at.');
  const kind = present[0];
  if (kind === undefined) return { kind: 'newest' };
  return { kind, cursor: parseCursorParam(query[kind])! };
}
