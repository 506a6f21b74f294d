import type { PendingAppend } from './append-batcher.ts';
import {
  CREATE_ROOMS,
  FIND_BY_SENDER_KEYS,
  INSERT_MESSAGES,
  LOCK_ROOMS,
  messageRecord,
  messageRowFromSql,
  roomRowFromSql,
  type RawMessageRow,
  type RawRoomRow,
} from './message-sql.ts';
import type { AppendOutcome } from './message.repository.ts';
import { nextMessageId } from './monotonic-ulid.ts';
import { newRoomValues, roomScopeKey } from './room.repository.ts';
import type { MessageRow, RoomRow } from './schema.ts';
import type { SqlClient, SqlQueryable } from './sql-client.ts';

/**
 * Appends a batch of messages, to one room or several, in one transaction: for every room its
 * counters, its messages and their outbox entries commit together. The rooms are locked first, in
 * scope-key order, so each room's seq stays contiguous and (createdAt, messageId) follows commit
 * order. An item whose (sender, idempotency key) is already stored in its room, or appears earlier
 * in the batch, is a replay. Rooms must exist (see `ensureRooms`).
 */
export async function appendBatch(sql: SqlClient, items: PendingAppend[]): Promise<AppendOutcome[]> {
  return sql.transaction(async (tx) => {
    const scopeKeys = [...new Set(items.map((item) => roomScopeKey(item.scope)))];
    const locked = await lockRooms(tx, scopeKeys);
    // Under the room locks no other append to these rooms runs, so these key checks cannot race.
    const known = await existingByKey(tx, items, locked);

    const outcomes: Array<AppendOutcome | undefined> = [];
    const created: Array<{ index: number; message: MessageRow; payload: string }> = [];
    const state = new Map<string, { room: RoomRow; seq: number; last: { timeMs: number; id: string } | null }>();
    for (const room of locked.values()) {
      const last = room.lastMessageAt && room.lastMessageId ? { timeMs: room.lastMessageAt.getTime(), id: room.lastMessageId } : null;
      state.set(room.roomId, { room, seq: room.lastSeq, last });
    }
    items.forEach((item, index) => {
      const room = locked.get(roomScopeKey(item.scope))!;
      const key = senderKey(room.roomId, item.message);
      const earlier = known.get(key);
      if (earlier) return void (outcomes[index] = { kind: 'replayed', message: earlier });
      if (room.state === 'sealed') return void (outcomes[index] = { kind: 'sealed' });
      const roomState = state.get(room.roomId)!;
      const next = nextMessageId(item.options.now.getTime(), roomState.last);
      roomState.last = next;
      roomState.seq += 1;
      const message: MessageRow = {
        ...item.message,
        roomId: room.roomId,
        seq: roomState.seq,
        messageId: next.id,
        repositoryId: item.scope.repositoryId,
        branchId: item.scope.branchId,
        createdAt: new Date(next.timeMs),
      };
      known.set(key, message);
      created.push({ index, message, payload: item.options.outboxPayload(message) });
    });
    if (created.length === 0) return outcomes as AppendOutcome[];

    const updatedRooms = new Map<string, RoomRow>();
    for (const { room, seq, last } of state.values()) {
      if (seq === room.lastSeq || !last) continue;
      updatedRooms.set(room.roomId, { ...room, lastSeq: seq, lastMessageAt: new Date(last.timeMs), lastMessageId: last.id });
    }
    const outboxIds = await insertMessages(tx, created, [...updatedRooms.values()]);
    for (const entry of created) {
      const { message } = entry;
      outcomes[entry.index] = {
        kind: 'created',
        message,
        room: updatedRooms.get(message.roomId)!,
        outboxId: outboxIds.get(`${message.roomId}\u0000${message.seq}`)!,
        outboxPayload: entry.payload,
      };
    }
    return outcomes as AppendOutcome[];
  });
}

/**
 * Creates the rooms of `items` that do not exist yet, each in its own short statement outside any
 * append transaction: creating rooms inside one could make two transactions wait on each other's
 * uncommitted rooms. A room created by an append that then fails stays, empty, like a room a stream
 * materialized.
 */
export async function ensureRooms(sql: SqlClient, items: PendingAppend[]): Promise<void> {
  const byKey = new Map<string, Record<string, unknown>>();
  for (const { scope, options } of items) {
    const key = roomScopeKey(scope);
    if (byKey.has(key)) continue;
    const values = newRoomValues(scope, { roomId: options.newRoomId, now: options.now });
    byKey.set(key, {
      room_id: values.roomId,
      scope_key: values.scopeKey,
      repository_id: values.repositoryId,
      branch_id: values.branchId ?? null,
      kind: values.kind,
      created_at: (values.createdAt as Date).toISOString(),
    });
  }
  await sql.query(CREATE_ROOMS, [JSON.stringify([...byKey.values()])]);
}

function senderKey(roomId: string, m: { senderKind: string; senderId: string; idempotencyKey: string }): string {
  return `${roomId}\u0000${m.senderKind}\u0000${m.senderId}\u0000${m.idempotencyKey}`;
}

async function lockRooms(tx: SqlQueryable, scopeKeys: string[]): Promise<Map<string, RoomRow>> {
  const rows = await tx.query<RawRoomRow>(LOCK_ROOMS, [JSON.stringify(scopeKeys)]);
  const locked = new Map(rows.map((raw) => [raw.scope_key, roomRowFromSql(raw)]));
  for (const key of scopeKeys) if (!locked.has(key)) throw new Error(`room ${key} does not exist`);
  return locked;
}

async function existingByKey(tx: SqlQueryable, items: PendingAppend[], locked: Map<string, RoomRow>): Promise<Map<string, MessageRow>> {
  const keys = items.map(({ scope, message }) => ({
    room_id: locked.get(roomScopeKey(scope))!.roomId,
    sender_kind: message.senderKind,
    sender_id: message.senderId,
    idempotency_key: message.idempotencyKey,
  }));
  const rows = await tx.query<RawMessageRow>(FIND_BY_SENDER_KEYS, [JSON.stringify(keys)]);
  const existing = new Map<string, MessageRow>();
  for (const raw of rows) {
    existing.set(senderKey(raw.room_id, { senderKind: raw.sender_kind, senderId: raw.sender_id, idempotencyKey: raw.idempotency_key }), messageRowFromSql(raw));
  }
  return existing;
}

/**
 * One statement for the messages, the room counters, the owed mention fan-outs and the outbox
 * entries: the room locks are held until commit, so every round trip saved here raises the per-room
 * append ceiling. Returns outbox ids by `roomId NUL seq`.
 */
async function insertMessages(
  tx: SqlQueryable,
  created: Array<{ message: MessageRow; payload: string }>,
  rooms: RoomRow[],
): Promise<Map<string, number>> {
  const messages = created.map((c) => messageRecord(c.message));
  const counters = rooms.map((r) => ({ room_id: r.roomId, last_seq: r.lastSeq, last_message_at: r.lastMessageAt!.toISOString(), last_message_id: r.lastMessageId }));
  const fanouts = created
    .filter(({ message: m }) => m.mentions !== null && m.mentions.length > 0)
    .map(({ message: m }) => ({ message_id: m.messageId, room_id: m.roomId, seq: m.seq, created_at: m.createdAt.toISOString() }));
  const outbox = created.map(({ message: m, payload }) => ({ room_id: m.roomId, seq: m.seq, payload }));
  const rows = await tx.query<{ id: string | number; scope_key: string; seq: string | number }>(INSERT_MESSAGES, [
    JSON.stringify(messages),
    JSON.stringify(counters),
    JSON.stringify(fanouts),
    JSON.stringify(outbox),
  ]);
  return new Map(rows.map((r) => [`${r.scope_key}\u0000${Number(r.seq)}`, Number(r.id)]));
}
