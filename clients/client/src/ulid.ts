const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A canonical ULID as the service requires for `Idempotency-Key`. */
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/**
 * Makes a ULID: 48 bits of milliseconds and 80 bits from `crypto.getRandomValues`, which Node >= 20
 * and every browser provide, so the key is unguessable and unique per logical send.
 */
export function newUlid(now: number = Date.now()): string {
  let time = '';
  let ms = Math.floor(now);
  for (let i = 0; i < 10; i += 1) {
    time = CROCKFORD[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  let random = '';
  for (let i = 0; i < 16; i += 1) random += CROCKFORD[(bytes[i] as number) & 31];
  return time + random;
}
