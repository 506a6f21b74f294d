import { z } from 'zod';

/** Crockford base32 ULID, canonical form (the same rule as `isCanonicalUlid`). */
export const CANONICAL_ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** A client-chosen request ID: 1–128 characters of `[A-Za-z0-9._:-]` (architecture decision). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Largest message body the service accepts, in decoded UTF-8 bytes (spec section 8). */
export const MAX_MESSAGE_BODY_BYTES = 16_384;

// Factories, not shared instances: each field gets its own schema so descriptions never collide.

/** A canonical ULID string (repository and branch IDs). */
export function ulidString(): z.ZodString {
  return z.string().regex(CANONICAL_ULID_PATTERN);
}

/** An ISO 8601 date-time with `Z` or a numeric offset. */
export function dateTimeString(): z.ZodISODateTime {
  return z.iso.datetime({ offset: true });
}

/** A non-negative int64 kept within JavaScript's safe-integer range. */
export function nonNegativeInt64(): z.ZodNumber {
  return z.int().min(0);
}

/** A non-negative int32. */
export function nonNegativeInt32(): z.ZodNumber {
  return z.int32().min(0);
}

/** Number of bytes `text` takes in UTF-8. */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
