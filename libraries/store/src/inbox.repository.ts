import { and, eq, gte } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { inboxes, type InboxRow } from './inbox.schema.ts';
import { storeCall } from './store-errors.ts';

/** Whose inbox, in which repository. A user token's principal is kind `human`. */
export interface InboxOwner {
  repositoryId: string;
  principalKind: 'human' | 'bot';
  principalId: string;
}

/**
 * The unique key of an inbox, also its backbone scope key. It is the string the cursor codec binds
 * inbox cursors to, so a cursor's scope and its inbox can never drift apart.
 */
export function inboxKey(owner: InboxOwner): string {
  return `inbox:${owner.repositoryId}:${owner.principalKind}:${owner.principalId}`;
}

export interface InboxRepository {
  /** The inbox, or null when the principal was never notified in this repository. */
  find(owner: InboxOwner): Promise<InboxRow | null>;
  findByKey(key: string): Promise<InboxRow | null>;
  /**
   * Moves the acknowledged checkpoint from `fromSeq` to `toSeq` (`toSeq` > `fromSeq`) if it is still
   * at `fromSeq`: a compare-and-set, so of several racing moves from one checkpoint exactly one
   * succeeds. Returns whether this call moved it.
   */
  advanceAck(key: string, fromSeq: number, toSeq: number): Promise<boolean>;
}

export function createInboxRepository(db: ChatDb): InboxRepository {
  const findByKey = (key: string) =>
    storeCall(async () => {
      const [row] = await db.select().from(inboxes).where(eq(inboxes.inboxKey, key)).limit(1);
      return row ?? null;
    });
  return {
    find: (owner) => findByKey(inboxKey(owner)),
    findByKey,
    advanceAck: (key, fromSeq, toSeq) =>
      storeCall(async () => {
        if (toSeq <= fromSeq) throw new RangeError('the acknowledged checkpoint only moves forward');
        const rows = await db
          .update(inboxes)
          .set({ ackSeq: toSeq })
          .where(and(eq(inboxes.inboxKey, key), eq(inboxes.ackSeq, fromSeq), gte(inboxes.lastSeq, toSeq)))
          .returning({ ackSeq: inboxes.ackSeq });
        return rows.length === 1;
      }),
  };
}
