import { newUlid } from '@chat/contracts';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The next message ID of a room: a fresh ULID at `timeMs`, or, when that millisecond is the same as
 * the previous message's, the previous ID plus one in its random part. Together with a creation time
 * that never goes backwards per room, (createdAt, messageId) then sorts in commit order.
 */
export function nextMessageId(timeMs: number, previous: { timeMs: number; id: string } | null): { timeMs: number; id: string } {
  if (!previous || timeMs > previous.timeMs) return { timeMs, id: newUlid(timeMs) };
  const incremented = incrementRandomPart(previous.id);
  if (incremented) return { timeMs: previous.timeMs, id: incremented };
  // 80 random bits exhausted within one millisecond: move to the next millisecond.
  return { timeMs: previous.timeMs + 1, id: newUlid(previous.timeMs + 1) };
}

function incrementRandomPart(id: string): string | null {
  const chars = id.split('');
  for (let i = chars.length - 1; i >= 10; i--) {
    const index = ALPHABET.indexOf(chars[i]!);
    if (index < ALPHABET.length - 1) {
      chars[i] = ALPHABET[index + 1]!;
      return chars.join('');
    }
    chars[i] = ALPHABET[0]!;
  }
  return null;
}
