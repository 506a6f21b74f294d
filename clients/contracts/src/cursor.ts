import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from './errors.ts';

/** What a cursor is bound to. The scope is not in the cursor; the MAC binds it. */
export type CursorBinding =
  | { kind: 'room'; roomId: string }
  | { kind: 'inbox'; repositoryId: string; principalKind: 'human' | 'bot'; principalId: string }
  /** A principal's feed: its notifications across every repository, in feed order. */
  | { kind: 'feed'; principalKind: 'human' | 'bot'; principalId: string }
  /**
   * A place in a webhook's dead letters: after the dead letter `deliveryId`. The position is its
   * time of death; the delivery ID, which breaks ties between letters that died at the same time,
   * travels beside the cursor and is bound by the MAC like the webhook.
   */
  | { kind: 'webhookDeadLetter'; webhookId: string; deliveryId: string };

/** Cursor secrets. `current` signs; `current` and every `previous` key verify (rotation). */
interface CursorKeys {
  /** Secret used to sign new cursors; at least 32 characters. */
  current: string;
  /** Retired secrets still accepted for decoding. @defaultValue [] */
  previous?: string[];
}

/** Shortest secret accepted, in characters. */
const MIN_CURSOR_SECRET_LENGTH = 32;

const VERSION = 1;
const KIND_BYTE = { room: 1, inbox: 2, feed: 3, webhookDeadLetter: 4 } as const;
const HEADER_BYTES = 3; // version, kind, key id
const POSITION_BYTES = 8;
const MAC_BYTES = 16;
const PAYLOAD_BYTES = HEADER_BYTES + POSITION_BYTES; // 11
const CURSOR_BYTES = PAYLOAD_BYTES + MAC_BYTES; // 27: a multiple of 3, so base64url has no padding or spare bits
/** Length of every cursor string. */
export const CURSOR_LENGTH = (CURSOR_BYTES / 3) * 4; // 36
const CURSOR_SHAPE = /^[A-Za-z0-9_-]+$/;

interface CursorKey {
  id: number;
  secret: Buffer;
}

function toKey(secret: unknown): CursorKey {
  if (typeof secret !== 'string' || secret.length < MIN_CURSOR_SECRET_LENGTH) {
    throw new TypeError(`cursor secrets must be strings of at least ${MIN_CURSOR_SECRET_LENGTH} characters`);
  }
  const bytes = Buffer.from(secret, 'utf8');
  return { id: createHash('sha256').update(bytes).digest()[0]!, secret: bytes };
}

/**
 * The string the MAC binds a cursor to: `room:<roomId>`, `inbox:<repositoryId>:<principalKind>:<principalId>`,
 * `feed:<principalKind>:<principalId>` or `webhook-dead-letter:<webhookId>:<deliveryId>`.
 */
function cursorScopeString(scope: CursorBinding): string {
  switch (scope.kind) {
    case 'room':
      return `room:${scope.roomId}`;
    case 'inbox':
      return `inbox:${scope.repositoryId}:${scope.principalKind}:${scope.principalId}`;
    case 'feed':
      return `feed:${scope.principalKind}:${scope.principalId}`;
    case 'webhookDeadLetter':
      return `webhook-dead-letter:${scope.webhookId}:${scope.deliveryId}`;
  }
}

function invalid(): AppError {
  return new AppError('CURSOR_INVALID', 'The cursor is invalid for this room or inbox.');
}

/**
 * Opaque, tamper-evident cursors (architecture invariant 5): base64url (no padding) of
 * version | kind | key id | position (u64 big-endian) | HMAC-SHA256(version|kind|kid|position|scope)[0..16].
 * Every instance configured with the same keys accepts every other instance's cursors.
 */
export class CursorCodec {
  private readonly signing: CursorKey;
  private readonly verifying: readonly CursorKey[];

  constructor(keys: CursorKeys) {
    this.signing = toKey(keys.current);
    this.verifying = [this.signing, ...(keys.previous ?? []).map(toKey)];
  }

  /** Encodes `position` (a non-negative safe integer) bound to `scope`. */
  encode(scope: CursorBinding, position: number): string {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new RangeError('cursor position must be a non-negative safe integer');
    }
    const bytes = Buffer.alloc(CURSOR_BYTES);
    bytes[0] = VERSION;
    bytes[1] = KIND_BYTE[scope.kind];
    bytes[2] = this.signing.id;
    bytes.writeBigUInt64BE(BigInt(position), HEADER_BYTES);
    mac(this.signing.secret, bytes.subarray(0, PAYLOAD_BYTES), scope).copy(bytes, PAYLOAD_BYTES);
    return bytes.toString('base64url');
  }

  /**
   * Returns the position a cursor encodes.
   * @throws AppError `CURSOR_INVALID` for anything not produced by `encode` for this very scope with a
   * known key: forged, edited, truncated, padded, non-canonical, other alphabet, other kind or scope.
   */
  decode(scope: CursorBinding, cursor: unknown): number {
    if (typeof cursor !== 'string' || cursor.length !== CURSOR_LENGTH || !CURSOR_SHAPE.test(cursor)) {
      throw invalid();
    }
    const bytes = Buffer.from(cursor, 'base64url');
    // Node's decoder is lenient; only the one canonical spelling of these bytes is accepted.
    if (bytes.length !== CURSOR_BYTES || bytes.toString('base64url') !== cursor) throw invalid();
    if (bytes[0] !== VERSION || bytes[1] !== KIND_BYTE[scope.kind]) throw invalid();
    const payload = bytes.subarray(0, PAYLOAD_BYTES);
    const presented = bytes.subarray(PAYLOAD_BYTES);
    let verified = false;
    // Two keys may share a one-byte id, so every key with that id is tried.
    for (const key of this.verifying) {
      if (key.id === bytes[2] && timingSafeEqual(mac(key.secret, payload, scope), presented)) verified = true;
    }
    if (!verified) throw invalid();
    const position = bytes.readBigUInt64BE(HEADER_BYTES);
    if (position > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid();
    return Number(position);
  }
}

function mac(secret: Buffer, payload: Buffer, scope: CursorBinding): Buffer {
  return createHmac('sha256', secret)
    .update(payload)
    .update(cursorScopeString(scope), 'utf8')
    .digest()
    .subarray(0, MAC_BYTES);
}
