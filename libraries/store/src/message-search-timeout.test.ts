import { expect } from 'chai';
import { sql } from 'drizzle-orm';
import { ulid } from 'ulid';
import { freshTargets } from '../test/targets.ts';
import { migrate } from './migrate.ts';
import type { MessageSearchQuery } from './message-search.ts';
import { SearchTimeoutError } from './store-errors.ts';
import { createStore } from './store.ts';

// PostgreSQL only: PGlite cannot cancel a running statement, so it has no time bound to test.
const postgres = freshTargets.find((t) => t.name === 'postgres')!;

describe('message search time bound on postgres', function () {
  this.timeout(60_000);

  it('fails with SearchTimeoutError once the search has run past its bound, and leaves the connection usable', async function () {
    const fresh = await postgres.open();
    try {
      await migrate(fresh.database);
      const store = createStore(fresh.database);
      const other = await fresh.openAnother!();
      const query: MessageSearchQuery = {
        repositoryId: ulid(), terms: ['anything'], phrases: [], senderIds: [], mentionIds: [], hasCode: false, hasLink: false,
        order: 'newest', limit: 10, timeoutMs: 200,
      };
      // Another process holds the table, so the search waits until its bound ends it.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holding = other.db.transaction(async (tx) => {
        await tx.execute(sql`LOCK TABLE messages IN ACCESS EXCLUSIVE MODE`);
        locked();
        await released;
      });
      await isLocked;
      let failure: unknown;
      try {
        await store.messages.search(query);
      } catch (err) {
        failure = err;
      } finally {
        release();
        await holding;
      }
      expect(failure).to.be.instanceOf(SearchTimeoutError);
      expect((failure as SearchTimeoutError).timeoutMs).to.equal(200);
      // The bound was the transaction's own (SET LOCAL): the next search runs unbounded by it.
      expect((await store.messages.search({ ...query, timeoutMs: 5000 })).hits).to.deep.equal([]);
    } finally {
      await fresh.cleanup();
    }
  });
});
