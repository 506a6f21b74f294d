import type { MentionBinding } from './contract-types.ts';

/** Who a mention names: the spec's MentionPrincipalKind and the principal's ID. */
export interface MentionPrincipal {
  principalKind: MentionBinding['principalKind'];
  principalId: string;
}

/**
 * The UTF-8 length of `text` in bytes, which is what mention spans count in (spec section 2,
 * MentionBinding), computed from the UTF-16 code units without encoding: a surrogate pair is 4 bytes,
 * and a lone surrogate 3, as it is sent as U+FFFD.
 */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The structured mention of `@<principalId>` written at UTF-16 index `index` of `body` (a string
 * index, as editors and `indexOf` give it), with its span in UTF-8 bytes: `startByte` counts every
 * byte before the `@`, emoji and other multi-byte text included, and `endByte` is just past the ID.
 * Throws a RangeError when `body` does not hold `@<principalId>` at `index`: a span must cover the
 * text that shows the mention.
 */
export function mentionBindingAt(body: string, index: number, principal: MentionPrincipal): MentionBinding {
  const shown = `@${principal.principalId}`;
  if (!Number.isInteger(index) || index < 0 || body.slice(index, index + shown.length) !== shown) {
    throw new RangeError(`the body does not hold ${shown} at index ${index}`);
  }
  const startByte = utf8ByteLength(body.slice(0, index));
  return { principalKind: principal.principalKind, principalId: principal.principalId, startByte, endByte: startByte + utf8ByteLength(shown) };
}
