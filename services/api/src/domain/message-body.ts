import { AppError, MAX_MESSAGE_BODY_BYTES, type MentionBinding } from '@chat/contracts';

/** Most structured mentions one message may carry (documented in the README). */
export const MAX_MENTIONS_PER_MESSAGE = 50;
/** Longest principal ID a mention may name. */
export const MAX_PRINCIPAL_ID_LENGTH = 128;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const PRINCIPAL_ID = /^[\x21-\x7E]+$/;

/**
 * The body's size in decoded UTF-8 bytes, enforcing 1..16,384. A lone surrogate cannot be encoded
 * as UTF-8, so it could not be stored byte for byte: it is refused rather than silently replaced.
 */
export function measureBody(bodyMarkdown: string): { bytes: Buffer } {
  if (LONE_SURROGATE.test(bodyMarkdown)) throw new AppError('MESSAGE_INVALID', 'bodyMarkdown is not valid Unicode text.');
  const bytes = Buffer.from(bodyMarkdown, 'utf8');
  if (bytes.length < 1 || bytes.length > MAX_MESSAGE_BODY_BYTES) {
    throw new AppError('MESSAGE_INVALID', `bodyMarkdown must be 1 to ${MAX_MESSAGE_BODY_BYTES} UTF-8 bytes; it is ${bytes.length}.`);
  }
  return { bytes };
}

/** A UTF-8 continuation byte (10xxxxxx) never starts a character. */
function isCharBoundary(bytes: Buffer, offset: number): boolean {
  return offset === bytes.length || (bytes[offset]! & 0xc0) !== 0x80;
}

/**
 * Mention spans must lie inside the body on character boundaries, be non-empty, and not overlap;
 * principal IDs are short printable ASCII. Violations are MENTION_INVALID.
 */
export function validateMentions(mentions: MentionBinding[], body: Buffer): void {
  if (mentions.length > MAX_MENTIONS_PER_MESSAGE) {
    throw new AppError('MENTION_INVALID', `A message may carry at most ${MAX_MENTIONS_PER_MESSAGE} mentions.`);
  }
  for (const [i, m] of mentions.entries()) {
    if (m.principalId.length > MAX_PRINCIPAL_ID_LENGTH || !PRINCIPAL_ID.test(m.principalId)) {
      throw new AppError('MENTION_INVALID', `mentions[${i}].principalId must be 1–${MAX_PRINCIPAL_ID_LENGTH} printable ASCII characters.`);
    }
    if (m.startByte >= m.endByte) throw new AppError('MENTION_INVALID', `mentions[${i}] must have startByte < endByte.`);
    if (m.endByte > body.length) throw new AppError('MENTION_INVALID', `mentions[${i}] ends beyond the body (${body.length} bytes).`);
    if (!isCharBoundary(body, m.startByte) || !isCharBoundary(body, m.endByte)) {
      throw new AppError('MENTION_INVALID', `mentions[${i}] does not start and end on character boundaries.`);
    }
  }
  const sorted = [...mentions].sort((a, b) => a.startByte - b.startByte);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.startByte < sorted[i - 1]!.endByte) throw new AppError('MENTION_INVALID', 'Mention spans must not overlap.');
  }
}

/** True when a retry carries the same content as the stored message (its exact-retry test). */
export function sameContent(
  stored: { bodyMarkdown: string; mentions: MentionBinding[] | null },
  request: { bodyMarkdown: string; mentions: MentionBinding[] },
): boolean {
  if (stored.bodyMarkdown !== request.bodyMarkdown) return false;
  const a = stored.mentions ?? [];
  const b = request.mentions;
  return (
    a.length === b.length &&
    a.every((m, i) => {
      const n = b[i]!;
      return m.principalKind === n.principalKind && m.principalId === n.principalId && m.startByte === n.startByte && m.endByte === n.endByte;
    })
  );
}
