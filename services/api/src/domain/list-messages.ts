import { AppError, type CursorCodec, type MessagePageResponse } from '@chat/contracts';
import type { Store } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import { loadRoom, type RoomLookup } from './get-room.ts';

export interface ListMessagesInput extends RoomLookup {
  limit: number;
  cursor: string | undefined;
}

/**
 * listRepositoryMessages / listBranchMessages: oldest first by (createdAt, messageId), which is
 * the room's seq order. A cursor names the last message already seen and is bound to its room.
 */
export async function listMessages(
  deps: { store: Store; cursors: CursorCodec; clock: () => Date },
  input: ListMessagesInput,
): Promise<MessagePageResponse> {
  const room = await loadRoom(deps, input);
  if (!room) {
    // No room yet, so no cursor can have come from it.
    if (input.cursor !== undefined) throw new AppError('CURSOR_INVALID', 'cursor is not a valid cursor for this room.');
    return { items: [], nextCursor: null };
  }
  const scope = { kind: 'room', roomId: room.roomId } as const;
  const afterSeq = input.cursor === undefined ? 0 : deps.cursors.decode(scope, input.cursor);
  const rows = await deps.store.messages.listAfter(room.roomId, afterSeq, input.limit + 1);
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    items: page.map(toMessageResponse),
    nextCursor: rows.length > input.limit && last ? deps.cursors.encode(scope, last.seq) : null,
  };
}
