/**
 * The page cursor of a webhook's dead letters: where the previous page ended, the (deadAt,
 * deliveryId) of its last letter, the order the store lists them in. The time is the cursor codec's
 * position, MAC'd like every cursor and bound to the webhook and to the delivery ID; the delivery ID
 * follows the codec's fixed-length part, base64url-encoded. So a cursor of another webhook, one with
 * its delivery ID edited, and a forged one are CURSOR_INVALID, and the cursor stays opaque.
 */
import { AppError, CURSOR_LENGTH, type CursorBinding, type CursorCodec } from '@chat/contracts';
import type { DeadLetterPosition } from '@chat/store';

/** Longest cursor read: the codec's part and a delivery ID well past any this service makes. */
const MAX_CURSOR_LENGTH = CURSOR_LENGTH + 344;

const binding = (webhookId: string, deliveryId: string): CursorBinding => ({ kind: 'webhookDeadLetter', webhookId, deliveryId });

/** The cursor of the page that follows the dead letter at `after`. */
export function encodeDeadLetterCursor(cursors: CursorCodec, webhookId: string, after: DeadLetterPosition): string {
  return cursors.encode(binding(webhookId, after.deliveryId), after.deadAt.getTime()) + Buffer.from(after.deliveryId, 'utf8').toString('base64url');
}

/** Where `cursor` says the page starts; CURSOR_INVALID for anything `encodeDeadLetterCursor` did not make for this webhook. */
export function decodeDeadLetterCursor(cursors: CursorCodec, webhookId: string, cursor: string): DeadLetterPosition {
  if (cursor.length <= CURSOR_LENGTH || cursor.length > MAX_CURSOR_LENGTH) throw invalid();
  const tail = cursor.slice(CURSOR_LENGTH);
  const deliveryId = Buffer.from(tail, 'base64url').toString('utf8');
  // Only the one spelling `encode` makes: no lenient base64 and no bytes that are not UTF-8.
  if (Buffer.from(deliveryId, 'utf8').toString('base64url') !== tail) throw invalid();
  try {
    return { deadAt: new Date(cursors.decode(binding(webhookId, deliveryId), cursor.slice(0, CURSOR_LENGTH))), deliveryId };
  } catch (err) {
    if (err instanceof AppError) throw invalid();
    throw err;
  }
}

function invalid(): AppError {
  return new AppError('CURSOR_INVALID', 'cursor is not a dead-letter cursor of this webhook.');
}
