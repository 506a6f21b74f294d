import { and, asc, eq, gt } from 'drizzle-orm';
import { RoomAppendBatcher } from './append-batcher.ts';
import type { ChatDb } from './database.ts';
import { appendBatch } from './message-append.ts';
import { roomScopeKey, type RoomScope } from './room.repository.ts';
import { messages, rooms, type MessageRow, type RoomRow, type StoredMention } from './schema.ts';
import { storeCall } from './store-errors.ts';

/** Everything about a new message that the caller decides; IDs, times and seq are the store's. */
export interface NewMessage {
  senderKind: 'user' | 'bot';
  senderId: string;
  requestId: string;
  idempotencyKey: string;
  bodyMarkdown: string;
  bodyBytes: number;
  renderedHtml: string;
  mentions: StoredMention[] | null;
  authorizationDecisionId: string | null;
  authorizingSubjectId: string | null;
  authorizingSubjectKind: 'user' | 'organization' | null;
  botCredentialId: string | null;
  botGrantId: string | null;
}

export type AppendOutcome =
  | { kind: 'created'; message: MessageRow; room: RoomRow; outboxId: number; outboxPayload: string }
  | { kind: 'replayed'; message: MessageRow }
  | { kind: 'sealed' };

export interface AppendOptions {
  /** ID for the room if this append creates it. */
  newRoomId: string;
  now: Date;
  /** The backbone payload of the new message, stored in the outbox in the same transaction. */
  outboxPayload(message: MessageRow): string;
}

export interface MessageRepository {
  /**
   * Appends one message atomically: the room (created on first append), its counters, the message
   * and its outbox entry commit together. Appends to a room are serialized on the room row, which
   * makes the per-room seq contiguous and (createdAt, messageId) follow commit order.
   */
  append(scope: RoomScope, message: NewMessage, options: AppendOptions): Promise<AppendOutcome>;
  findByIdempotencyKey(scope: RoomScope, senderKind: 'user' | 'bot', senderId: string, key: string): Promise<MessageRow | null>;
  /** Messages of a room with seq greater than `afterSeq`, oldest first. */
  listAfter(roomId: string, afterSeq: number, limit: number): Promise<MessageRow[]>;
}

export function createMessageRepository(db: ChatDb): MessageRepository {
  const batcher = new RoomAppendBatcher((scope, items) => appendBatch(db, scope, items));
  return {
    append: (scope, message, options) => storeCall(() => batcher.submit(scope, { message, options })),
    findByIdempotencyKey: (scope, senderKind, senderId, key) =>
      storeCall(async () => {
        const [row] = await db
          .select({ message: messages })
          .from(messages)
          .innerJoin(rooms, eq(rooms.roomId, messages.roomId))
          .where(
            and(
              eq(rooms.scopeKey, roomScopeKey(scope)),
              eq(messages.senderKind, senderKind),
              eq(messages.senderId, senderId),
              eq(messages.idempotencyKey, key),
            ),
          )
          .limit(1);
        return row?.message ?? null;
      }),
    listAfter: (roomId, afterSeq, limit) =>
      storeCall(() =>
        db
          .select()
          .from(messages)
          .where(and(eq(messages.roomId, roomId), gt(messages.seq, afterSeq)))
          .orderBy(asc(messages.seq))
          .limit(limit),
      ),
  };
}

