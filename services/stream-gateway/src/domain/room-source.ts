import type { CursorCodec } from '@chat/contracts';
import { toMessageResponse, type Store } from '@chat/store';
import type { SourceItem, StreamSource } from './stream-source.ts';

/**
 * Page reads in flight, per store: after a gap every stream of a busy room asks for the same page
 * at once, and messages never change, so those streams share one query (and one serialization)
 * instead of queueing a query each on the pool.
 */
const pagesInFlight = new WeakMap<Store, Map<string, Promise<SourceItem[]>>>();

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
    readAfter(afterSeq, limit) {
      let pages = pagesInFlight.get(deps.store);
      if (!pages) pagesInFlight.set(deps.store, (pages = new Map()));
      const key = `${roomId}:${afterSeq}:${limit}`;
      let page = pages.get(key);
      if (!page) {
        const reads = pages;
        page = deps.store.messages
          .listAfter(roomId, afterSeq, limit)
          .then((rows) => rows.map((row) => ({ seq: row.seq, data: JSON.stringify(toMessageResponse(row)) })))
          .finally(() => reads.delete(key));
        pages.set(key, page);
      }
      return page;
    },
    cursorFor: (seq) => deps.cursors.encode(scope, seq),
  };
}
