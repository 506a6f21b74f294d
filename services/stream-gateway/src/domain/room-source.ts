import type { CursorCodec } from '@chat/contracts';
import { toMessageResponse, type Store } from '@chat/store';
import type { StreamSource } from './stream-source.ts';

/** The messages of one persisted room as a stream source. */
export function createRoomSource(deps: { store: Store; cursors: CursorCodec }, roomId: string): StreamSource {
  const scope = { kind: 'room', roomId } as const;
  return {
    channel: 'messages',
    scopeKey: roomId,
    eventName: 'message',
    async highWater() {
      const room = await deps.store.rooms.findById(roomId);
      return room?.lastSeq ?? 0;
    },
    async readAfter(afterSeq, limit) {
      const rows = await deps.store.messages.listAfter(roomId, afterSeq, limit);
      return rows.map((row) => ({ seq: row.seq, data: JSON.stringify(toMessageResponse(row)) }));
    },
    cursorFor: (seq) => deps.cursors.encode(scope, seq),
  };
}
