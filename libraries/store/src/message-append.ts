import { newUlid } from '@chat/contracts';
import type { PendingAppend, StepOutcome } from './message-append.types.ts';
import { APPEND_MESSAGES, CREATE_ROOMS, messageRowFromJson, type JsonMessageRow } from './message-sql.ts';
import { newRoomValues, roomScopeKey } from './room.repository.ts';
import type { SqlClient } from './sql-client.ts';

/**
 * Runs a batch of append steps, to one room or several, in one statement and so one transaction
 * (`sql/functions/chat_append_messages_v4.sql`, where idempotency is decided and rate units are
 * taken): for every room its counters, its messages and their outbox entries commit together, and
 * each step that brings a rate budget takes its unit there. Each room is locked, in scope-key order,
 * before its steps run, so its seq stays contiguous and (createdAt, messageId) follows commit order.
 * An item whose (sender, idempotency key) is already stored in its room, or appears earlier in the
 * batch, is a replay. Rooms must exist (see `ensureRooms`).
 *
 * Message IDs: each item brings a fresh ULID at its own time, which the database takes when that
 * time is past the room's last message, and otherwise replaces with the last ID plus one (the rule
 * of monotonic-ulid.ts, in SQL).
 */
export async function appendBatch(sql: SqlClient, items: PendingAppend[]): Promise<StepOutcome[]> {
  const batch = items.map(({ step, scope, message: m, options, budget }, ord) => {
    const nowMs = options.now.getTime();
    const rate = budget?.budget;
    return {
      ord,
      step,
      seal: options.sealedByCore === true,
      scope_key: roomScopeKey(scope),
      now_ms: nowMs,
      fresh_id: newUlid(nowMs),
      repository_id: scope.repositoryId,
      branch_id: scope.branchId,
      sender_kind: m.senderKind,
      sender_id: m.senderId,
      request_id: m.requestId,
      idempotency_key: m.idempotencyKey,
      body_base64: Buffer.from(m.bodyMarkdown, 'utf8').toString('base64'),
      body_bytes: m.bodyBytes,
      rendered_html: m.renderedHtml,
      mentions: m.mentions,
      authorization_decision_id: m.authorizationDecisionId,
      authorizing_subject_id: m.authorizingSubjectId,
      authorizing_subject_kind: m.authorizingSubjectKind,
      bot_credential_id: m.botCredentialId,
      bot_grant_id: m.botGrantId,
      rate_sender_kind: rate?.senderKind ?? null,
      rate_sender_id: rate?.senderId ?? null,
      rate_room_key: rate?.roomKey ?? null,
      rate_window_start_ms: rate?.windowStartMs ?? null,
      rate_limit: rate?.limit ?? null,
      rate_held: options.hold !== undefined,
    };
  });
  const rows = await sql.query<AppendResultRow>(APPEND_MESSAGES, [JSON.stringify(batch)]);
  const outcomes: Array<StepOutcome | undefined> = new Array(items.length);
  for (const row of rows) {
    if (row.outcome === 'sealed') outcomes[row.ord] = { kind: 'sealed' };
    else if (row.outcome === 'held') outcomes[row.ord] = { kind: 'held' };
    else if (row.outcome === 'rate_limited') outcomes[row.ord] = { kind: 'rate_limited', retryAfterMs: items[row.ord]!.budget?.retryAfterMs ?? 1 };
    else if (row.outcome === 'replayed') outcomes[row.ord] = { kind: 'replayed', message: messageRowFromJson(row.stored_message!) };
    else {
      const { scope, message } = items[row.ord]!;
      outcomes[row.ord] = {
        kind: 'created',
        message: {
          ...message,
          roomId: row.room_id!,
          seq: Number(row.seq),
          messageId: row.message_id!,
          repositoryId: scope.repositoryId,
          branchId: scope.branchId,
          createdAt: new Date(Number(row.created_ms)),
        },
        outboxId: Number(row.outbox_id),
      };
    }
  }
  outcomes.forEach((outcome, i) => {
    if (!outcome) throw new Error(`append ${i} of the batch got no outcome`);
  });
  return outcomes as StepOutcome[];
}

/** A row of `chat_append_messages_v4`; int8 columns come as strings from pg and numbers from PGlite. */
interface AppendResultRow {
  ord: number;
  outcome: 'created' | 'replayed' | 'held' | 'sealed' | 'rate_limited';
  outbox_id: string | number | null;
  room_id: string | null;
  seq: string | number | null;
  message_id: string | null;
  created_ms: string | number | null;
  stored_message: JsonMessageRow | null;
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

