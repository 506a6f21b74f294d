/** Crockford base32 ULID in its canonical form: 26 upper-case characters, first at most '7'. */
const CANONICAL_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** True when `value` is a canonical ULID (upper case, no ambiguous letters, no overflow). */
export function isCanonicalUlid(value: unknown): value is string {
  return typeof value === 'string' && CANONICAL_ULID.test(value);
}
