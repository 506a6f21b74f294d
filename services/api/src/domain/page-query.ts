import { AppError } from '@chat/contracts';

/** Page size when `limit` is omitted (architecture decision). */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/**
 * `limit` as the spec allows it: one decimal integer 1..200. Anything else (0, 201, -1, 1.5, "abc",
 * an empty value, a repeated parameter) is LIMIT_INVALID.
 */
export function parseLimit(raw: unknown): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  if (typeof raw !== 'string' || !/^[0-9]{1,4}$/.test(raw)) {
    throw new AppError('LIMIT_INVALID', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  const limit = Number(raw);
  if (limit < 1 || limit > MAX_PAGE_SIZE) throw new AppError('LIMIT_INVALID', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  return limit;
}

/** `cursor` is one opaque string when present; a repeated or empty one is CURSOR_INVALID. */
export function parseCursorParam(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.length === 0) throw new AppError('CURSOR_INVALID', 'cursor is not a valid cursor.');
  return raw;
}
