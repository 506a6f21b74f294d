const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The Idempotency-Key of a bot's `index`th reply to a notification: the first 128 bits of
 * SHA-256(`notificationId` NUL `index`) written as a canonical ULID (26 Crockford base32
 * characters, the first one 0-7), which is the form the API requires.
 *
 * Being a function of the notification alone is what makes a reply crash-safe: a handler run again
 * for the same notification (after a crash between the reply and the acknowledgement) sends the same
 * key, and the API answers 200 with the reply it already holds instead of appending a second one.
 */
export async function replyIdempotencyKey(notificationId: string, index: number): Promise<string> {
  const input = new TextEncoder().encode(`${notificationId}\u0000${index}`);
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', input));
  let value = 0n;
  for (const byte of digest.subarray(0, 16)) value = (value << 8n) | BigInt(byte);
  let key = '';
  for (let i = 0; i < 26; i++) {
    key = CROCKFORD[Number(value & 31n)]! + key;
    value >>= 5n;
  }
  return key;
}
