import type { Store } from '@chat/store';

/** What a room's stream has read from the store so far. */
export interface StoreReads {
  /** `listAfter` queries of the room. */
  queries: number;
  /** Rows those queries returned. */
  rows: number;
  /** The largest `limit` any of them asked for. */
  largestLimit: number;
  /** Puts the store's own `listAfter` back. */
  restore(): void;
}

/**
 * Counts the message reads of one room by wrapping `store.messages.listAfter` on the gateway's own
 * store object: room sources look the method up on every read, so every replay page, gap fill and
 * orderer read of the room goes through the wrapper. Other rooms pass through uncounted.
 */
export function countMessageReads(store: Store, roomId: string): StoreReads {
  const messages = store.messages;
  const original = messages.listAfter;
  const reads: StoreReads = {
    queries: 0,
    rows: 0,
    largestLimit: 0,
    restore: () => {
      messages.listAfter = original;
    },
  };
  messages.listAfter = async (room, afterSeq, limit) => {
    const rows = await original(room, afterSeq, limit);
    if (room === roomId) {
      reads.queries += 1;
      reads.rows += rows.length;
      reads.largestLimit = Math.max(reads.largestLimit, limit);
    }
    return rows;
  };
  return reads;
}
