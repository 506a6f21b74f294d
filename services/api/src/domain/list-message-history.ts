import { AppError, type CursorCodec, type MessageHistoryPageResponse } from '@chat/contracts';
import type { MessageRow, Store } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import { loadRoom, type RoomLookup } from './get-room.ts';
import type { HistoryAnchor } from './history-query.ts';

export interface ListMessageHistoryInput extends RoomLookup {
  limit: number;
  anchor: HistoryAnchor;
}

/**
 * listRepositoryMessageHistory / listBranchMessageHistory (extension): up to `limit` consecutive
 * messages of a room, oldest first by (createdAt, messageId) like every page, each with its durable
 * cursor. A cursor is a message's position (its seq, MAC'd and bound to the room), the same one
 * the list and the stream hand out; `before`, `after` and `at` say which side of that message to
 * read, so one cursor serves every direction. Every read is one range scan of the room's seq index
 * of at most `limit + 1` rows: its cost does not grow with the room or the position.
 */
export async function listMessageHistory(
  deps: { store: Store; cursors: CursorCodec; clock: () => Date },
  input: ListMessageHistoryInput,
): Promise<MessageHistoryPageResponse> {
  const { anchor, limit } = input;
  const room = await loadRoom(deps, input);
  if (!room) {
    // No room yet, so no cursor can have come from it.
    if (anchor.kind !== 'newest') throw new AppError('CURSOR_INVALID', 'cursor is not a valid cursor for this room.');
    return { items: [], cursors: [], olderCursor: null, newerCursor: null };
  }
  const scope = { kind: 'room', roomId: room.roomId } as const;
  const position = anchor.kind === 'newest' ? undefined : deps.cursors.decode(scope, anchor.cursor);

  let rows: MessageRow[];
  let hasOlder: boolean;
  let hasNewer: boolean;
  if (position === undefined || anchor.kind === 'before') {
    // One row more than asked tells whether anything older remains.
    const beforeSeq = position ?? Number.MAX_SAFE_INTEGER;
    const read = await deps.store.messages.listBefore(room.roomId, beforeSeq, limit + 1);
    rows = read.length > limit ? read.slice(1) : read;
    hasOlder = read.length > limit;
    // Before a message there is at least that message; the newest page has nothing newer when read.
    hasNewer = position !== undefined;
  } else {
    const afterSeq = anchor.kind === 'at' ? position - 1 : position;
    const read = await deps.store.messages.listAfter(room.roomId, afterSeq, limit + 1);
    rows = read.slice(0, limit);
    hasNewer = read.length > limit;
    // Seqs are contiguous from 1: whatever follows seq 1 has something older.
    hasOlder = (rows[0]?.seq ?? afterSeq + 1) > 1;
  }
  const cursors = rows.map((row) => deps.cursors.encode(scope, row.seq));
  return {
    items: rows.map(toMessageResponse),
    cursors,
    olderCursor: hasOlder && cursors.length > 0 ? cursors[0]! : null,
    newerCursor: hasNewer && cursors.length > 0 ? cursors[cursors.length - 1]! : null,
  };
}
