import type { CursorCodec } from '@chat/contracts';
import type { Store } from '@chat/store';
import { messageJson } from '@chat/wire';
import type { SourceItem, StreamSource } from './stream-source.ts';

/**
 * Page reads in flight, per store: after a gap every stream of a busy room asks for the same page
 * at once, and messages never change, so those streams share one query (and one serialization)
 * instead of queueing a query each on the pool.
 */
const pagesInFlight = new WeakMap<Store, Map<string, Promise<SourceItem[]>>>();

/**
 * The messages of one persisted room as a stream source. A class rather than an object of
 * closures: every idle room stream holds one, and methods on the prototype cost nothing per stream.
 */
export class RoomSource implements StreamSource {
  readonly channel = 'messages' as const;
  readonly eventName = 'message' as const;

  constructor(
    private readonly deps: { store: Store; cursors: CursorCodec },
    /** The room id, which is also the backbone event's scope key. */
    readonly scopeKey: string,
  ) {}

  async highWater(): Promise<number> {
    const room = await this.deps.store.rooms.findById(this.scopeKey);
    return room?.lastSeq ?? 0;
  }

  readAfter(afterSeq: number, limit: number): Promise<SourceItem[]> {
    const { store } = this.deps;
    let pages = pagesInFlight.get(store);
    if (!pages) pagesInFlight.set(store, (pages = new Map()));
    const roomId = this.scopeKey;
    const key = `${roomId}:${afterSeq}:${limit}`;
    let page = pages.get(key);
    if (!page) {
      const reads = pages;
      page = store.messages
        .listAfter(roomId, afterSeq, limit)
        .then((rows) => rows.map((row) => ({ seq: row.seq, data: messageJson(row) })))
        .finally(() => reads.delete(key));
      pages.set(key, page);
    }
    return page;
  }

  cursorFor(seq: number): string {
    return this.deps.cursors.encode({ kind: 'room', roomId: this.scopeKey }, seq);
  }
}

/** The messages of one persisted room as a stream source (see {@link RoomSource}). */
export function createRoomSource(deps: { store: Store; cursors: CursorCodec }, roomId: string): StreamSource {
  return new RoomSource(deps, roomId);
}
