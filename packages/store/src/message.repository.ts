import { and, asc, eq, gt } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { recordMentionFanout } from './mention-fanout.repository.ts';
import { nextMessageId } from './monotonic-ulid.ts';
import { newRoomValues, roomScopeKey, type RoomScope } from './room.repository.ts';
import { messages, outbox, rooms, type MessageRow, type RoomRow, type StoredMention } from './schema.ts';
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
  | { kind: 'created'; message: MessageRow; room: RoomRow; outboxId: number }
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
  return {
    append: (scope, message, options) => storeCall(() => appendInTransaction(db, scope, message, options)),
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

async function appendInTransaction(db: ChatDb, scope: RoomScope, input: NewMessage, options: AppendOptions): Promise<AppendOutcome> {
  return db.transaction(async (tx) => {
    const scopeKey = roomScopeKey(scope);
    const lockRoom = async () => {
      const [row] = await tx.select().from(rooms).where(eq(rooms.scopeKey, scopeKey)).for('update');
      return row;
    };
    let room = await lockRoom();
    if (!room) {
      await tx.insert(rooms).values(newRoomValues(scope, { roomId: options.newRoomId, now: options.now })).onConflictDoNothing({ target: rooms.scopeKey });
      room = await lockRoom();
      if (!room) throw new Error(`room ${scopeKey} vanished after insert`);
    }

    // Under the room lock no other append to this room runs, so this check cannot race.
    const [existing] = await tx
      .select()
      .from(messages)
      .where(
        and(
          eq(messages.roomId, room.roomId),
          eq(messages.senderKind, input.senderKind),
          eq(messages.senderId, input.senderId),
          eq(messages.idempotencyKey, input.idempotencyKey),
        ),
      )
      .limit(1);
    if (existing) return { kind: 'replayed', message: existing } as const;
    if (room.state === 'sealed') return { kind: 'sealed' } as const;

    const previous = room.lastMessageAt && room.lastMessageId ? { timeMs: room.lastMessageAt.getTime(), id: room.lastMessageId } : null;
    const next = nextMessageId(options.now.getTime(), previous);
    const seq = room.lastSeq + 1;
    const createdAt = new Date(next.timeMs);
    const [message] = await tx
      .insert(messages)
      .values({ ...input, roomId: room.roomId, seq, messageId: next.id, repositoryId: scope.repositoryId, branchId: scope.branchId, createdAt })
      .returning();
    if (!message) throw new Error('message insert returned no row');
    const [updatedRoom] = await tx
      .update(rooms)
      .set({ lastSeq: seq, lastMessageAt: createdAt, lastMessageId: next.id })
      .where(eq(rooms.roomId, room.roomId))
      .returning();
    const [entry] = await tx
      .insert(outbox)
      .values({ channel: 'messages', scopeKey: room.roomId, seq, payload: options.outboxPayload(message) })
      .returning({ id: outbox.id });
    // The durable record that the notifier owes this message's mentions their notifications.
    if (input.mentions && input.mentions.length > 0) await recordMentionFanout(tx, message);
    return { kind: 'created', message, room: updatedRoom!, outboxId: entry!.id } as const;
  });
}
