import type { CursorCodec } from '@chat/contracts';
import type { Store } from '@chat/store';
import { messageJson } from '@chat/wire-format';
import type { SourceItem, StreamSource } from './stream-source.ts';

/**
 * Page reads in flight, per store: after a gap every stream of a busy room asks for the same page
 * at once, and messages never change, so those streams share one query (and one serialization)
 * instead of queueing a query each on the pool.
 */
const pagesInFlight = new WeakMap<Store, Map<string, Promise<SourceItem[]>>>();

/**
 * High-water reads waiting for their turn, per store and room. A stream's snapshot barrier must be
 * read after it registered with the hub (listener first), so a read already running can serve no
 * stream that registered after it started; but every stream of a room that registers before the
 * read leaves can share it. A read is queued for the next turn of the event loop and taken out of
 * this map the moment it starts: thousands of streams opening on one room cost a query per turn,
 * not one each.
 */
const highWaterReads = new WeakMap<Store, Map<string, Promise<number>>>();

function readHighWater(store: Store, roomId: string): Promise<number> {
  let reads = highWaterReads.get(store);
  if (!reads) highWaterReads.set(store, (reads = new Map()));
  let read = reads.get(roomId);
  if (!read) {
    const queued = reads;
    read = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      queued.delete(roomId);
      const room = await store.rooms.findById(roomId);
      return room?.lastSeq ?? 0;
    });
    reads.set(roomId, read);
  }
  return read;
}

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

  highWater(): Promise<number> {
    return readHighWater(this.deps.store, this.scopeKey);
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
