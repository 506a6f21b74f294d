import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { PendingAppend } from './append-batcher.ts';
import type { ChatDb } from './database.ts';
import { recordMentionFanouts } from './mention-fanout.repository.ts';
import type { AppendOutcome } from './message.repository.ts';
import { rowsOf } from './migrate.ts';
import { nextMessageId } from './monotonic-ulid.ts';
import { newRoomValues, roomScopeKey, type RoomScope } from './room.repository.ts';
import { messages, rooms, type MessageRow, type RoomRow } from './schema.ts';

type Tx = Parameters<Parameters<ChatDb['transaction']>[0]>[0];

/**
 * Appends a batch of messages to one room in one transaction: the room (created on first append),
 * its counters, the messages and their outbox entries commit together. The room row is locked first,
 * so the per-room seq stays contiguous and (createdAt, messageId) follows commit order. An item whose
 * (sender, idempotency key) is already stored, or appears earlier in the batch, is a replay.
 */
export async function appendBatch(db: ChatDb, scope: RoomScope, items: PendingAppend[]): Promise<AppendOutcome[]> {
  return db.transaction(async (tx) => {
    const scopeKey = roomScopeKey(scope);
    const first = items[0]!;
    let room = await lockRoom(tx, scopeKey);
    if (!room) {
      await tx.insert(rooms).values(newRoomValues(scope, { roomId: first.options.newRoomId, now: first.options.now })).onConflictDoNothing({ target: rooms.scopeKey });
      room = await lockRoom(tx, scopeKey);
      if (!room) throw new Error(`room ${scopeKey} vanished after insert`);
    }
    // Under the room lock no other append to this room runs, so these key checks cannot race.
    const known = await existingByKey(tx, room.roomId, items);

    const outcomes: Array<AppendOutcome | undefined> = [];
    const created: Array<{ index: number; message: MessageRow; payload: string }> = [];
    let last = room.lastMessageAt && room.lastMessageId ? { timeMs: room.lastMessageAt.getTime(), id: room.lastMessageId } : null;
    let seq = room.lastSeq;
    items.forEach((item, index) => {
      const key = senderKey(item.message);
      const earlier = known.get(key);
      if (earlier) return void (outcomes[index] = { kind: 'replayed', message: earlier });
      if (room.state === 'sealed') return void (outcomes[index] = { kind: 'sealed' });
      const next = nextMessageId(item.options.now.getTime(), last);
      last = next;
      seq += 1;
      const message: MessageRow = {
        ...item.message,
        roomId: room.roomId,
        seq,
        messageId: next.id,
        repositoryId: scope.repositoryId,
        branchId: scope.branchId,
        createdAt: new Date(next.timeMs),
      };
      known.set(key, message);
      created.push({ index, message, payload: item.options.outboxPayload(message) });
    });
    if (created.length === 0) return outcomes as AppendOutcome[];

    const outboxIds = await insertMessages(tx, room.roomId, created);
    const newest = created[created.length - 1]!.message;
    const updatedRoom: RoomRow = { ...room, lastSeq: newest.seq, lastMessageAt: newest.createdAt, lastMessageId: newest.messageId };
    // The durable record that the notifier owes these messages' mentions their notifications.
    await recordMentionFanouts(tx, created.map((e) => e.message).filter((m) => m.mentions !== null && m.mentions.length > 0));
    for (const [i, entry] of created.entries()) {
      outcomes[entry.index] = { kind: 'created', message: entry.message, room: updatedRoom, outboxId: outboxIds[i]!, outboxPayload: entry.payload };
    }
    return outcomes as AppendOutcome[];
  });
}

function senderKey(m: { senderKind: string; senderId: string; idempotencyKey: string }): string {
  return `${m.senderKind}\u0000${m.senderId}\u0000${m.idempotencyKey}`;
}

async function lockRoom(tx: Tx, scopeKey: string): Promise<RoomRow | undefined> {
  const [row] = await tx.select().from(rooms).where(eq(rooms.scopeKey, scopeKey)).for('update');
  return row;
}

async function existingByKey(tx: Tx, roomId: string, items: PendingAppend[]): Promise<Map<string, MessageRow>> {
  const keys = [...new Set(items.map((i) => i.message.idempotencyKey))];
  const rows = await tx
    .select()
    .from(messages)
    .where(and(eq(messages.roomId, roomId), inArray(messages.idempotencyKey, keys)));
  return new Map(rows.map((row) => [senderKey(row), row]));
}

/**
 * One statement for the messages, the room counters and the outbox entries: the room lock is held
 * until commit, so every round trip saved here raises the per-room append ceiling.
 */
async function insertMessages(tx: Tx, roomId: string, created: Array<{ message: MessageRow; payload: string }>): Promise<number[]> {
  const newest = created[created.length - 1]!.message;
  const messageRows: SQL[] = created.map(({ message: m }) => sql`(${m.roomId}, ${m.seq}, ${m.messageId}, ${m.repositoryId}, ${m.branchId},
    ${m.senderKind}, ${m.senderId}, ${m.requestId}, ${m.idempotencyKey}, ${Buffer.from(m.bodyMarkdown, 'utf8')}, ${m.bodyBytes},
    ${m.renderedHtml}, ${m.mentions === null ? null : JSON.stringify(m.mentions)}::jsonb, ${m.createdAt}::timestamptz,
    ${m.authorizationDecisionId}, ${m.authorizingSubjectId}, ${m.authorizingSubjectKind}, ${m.botCredentialId}, ${m.botGrantId})`);
  const outboxRows: SQL[] = created.map(({ message: m, payload }) => sql`('messages', ${roomId}, ${m.seq}, ${payload})`);
  const result = await tx.execute<{ id: unknown }>(sql`
    WITH inserted AS (
      INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id, request_id,
        idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at, authorization_decision_id,
        authorizing_subject_id, authorizing_subject_kind, bot_credential_id, bot_grant_id)
      VALUES ${sql.join(messageRows, sql`, `)}
    ), counters AS (
      UPDATE rooms SET last_seq = ${newest.seq}, last_message_at = ${newest.createdAt}::timestamptz, last_message_id = ${newest.messageId}
      WHERE room_id = ${roomId}
    )
    INSERT INTO outbox (channel, scope_key, seq, payload)
    VALUES ${sql.join(outboxRows, sql`, `)}
    RETURNING id, seq`);
  const bySeq = new Map(rowsOf<{ id: unknown; seq: unknown }>(result).map((r) => [Number(r.seq), Number(r.id)]));
  return created.map(({ message }) => bySeq.get(message.seq)!);
}
