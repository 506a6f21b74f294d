import { expect } from 'chai';
import { sql } from 'drizzle-orm';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshTargets, type FreshDatabase } from '../test/targets.ts';
import { migrate } from './migrate.ts';
import { createStore } from './store.ts';
import { rowsOf } from './sql-script.ts';
import { sqlFileNames, STORE_SQL_SOURCES } from './sql-sources.ts';

const FEED_MIGRATION = '0009_principal_feeds.sql';

/** A notification as a release without the feed wrote it: inbox, seq, created_at (ms), ID. */
interface OldNotification {
  inbox: string;
  seq: number;
  atMs: number;
  id: string;
}

for (const target of freshTargets) {
  describe(`migration ${FEED_MIGRATION} on ${target.name}: existing notifications join their principal's feed`, function () {
    this.timeout(120_000);
    let fresh: FreshDatabase;
    let before: string;

    beforeEach(async () => {
      fresh = await target.open();
      // The migrations up to the one before the feed.
      before = await mkdtemp(join(tmpdir(), 'chat-before-feed-'));
      for (const file of sqlFileNames(STORE_SQL_SOURCES.migrationsDir).filter((name) => name < FEED_MIGRATION)) {
        await copyFile(join(STORE_SQL_SOURCES.migrationsDir, file), join(before, file));
      }
    });
    afterEach(async () => {
      await fresh.cleanup();
      await rm(before, { recursive: true, force: true });
    });

    it('numbers each principal\'s notifications by (created_at, notification_id) and starts its checkpoint after what its inboxes acknowledged', async () => {
      const { database } = fresh;
      await migrate(database, { ...STORE_SQL_SOURCES, migrationsDir: before });
      const t = Date.parse('2026-01-01T00:00:00.000Z');
      // Bot b_ci in repositories R1 and R2 (R1 acknowledged through seq 2, R2 through 1); human u_bob in R1.
      const inboxes = [
        { key: 'inbox:R1:bot:b_ci', repo: 'R1', kind: 'bot', id: 'b_ci', lastSeq: 3, ackSeq: 2 },
        { key: 'inbox:R2:bot:b_ci', repo: 'R2', kind: 'bot', id: 'b_ci', lastSeq: 2, ackSeq: 1 },
        { key: 'inbox:R1:human:u_bob', repo: 'R1', kind: 'human', id: 'u_bob', lastSeq: 2, ackSeq: 2 },
      ];
      const notifications: OldNotification[] = [
        { inbox: 'inbox:R1:bot:b_ci', seq: 1, atMs: t + 10, id: '01A' },
        { inbox: 'inbox:R2:bot:b_ci', seq: 1, atMs: t + 20, id: '01B' },
        { inbox: 'inbox:R1:bot:b_ci', seq: 2, atMs: t + 30, id: '01D' },
        // Same time as R1's third: the ID breaks the tie.
        { inbox: 'inbox:R2:bot:b_ci', seq: 2, atMs: t + 40, id: '01C' },
        { inbox: 'inbox:R1:bot:b_ci', seq: 3, atMs: t + 40, id: '01E' },
        { inbox: 'inbox:R1:human:u_bob', seq: 1, atMs: t + 5, id: '01F' },
        { inbox: 'inbox:R1:human:u_bob', seq: 2, atMs: t + 50, id: '01G' },
      ];
      for (const inbox of inboxes) {
        await database.db.execute(sql`INSERT INTO inboxes (inbox_key, repository_id, principal_kind, principal_id, created_at, last_seq, ack_seq)
          VALUES (${inbox.key}, ${inbox.repo}, ${inbox.kind}, ${inbox.id}, now(), ${inbox.lastSeq}, ${inbox.ackSeq})`);
      }
      for (const n of notifications) {
        const inbox = inboxes.find((i) => i.key === n.inbox)!;
        await database.db.execute(sql`INSERT INTO notifications (inbox_key, seq, notification_id, target_kind, target_id, message_id, room_id,
            repository_id, sender_kind, sender_id, spans, created_at)
          VALUES (${n.inbox}, ${n.seq}, ${n.id}, ${inbox.kind}, ${inbox.id}, ${`M${n.id}`}, 'ROOM', ${inbox.repo}, 'user', 'u_alice', '[]'::jsonb,
            ${new Date(n.atMs).toISOString()}::timestamptz)`);
      }

      expect((await migrate(database)).migrations).to.deep.equal(sqlFileNames(STORE_SQL_SOURCES.migrationsDir).filter((name) => name >= FEED_MIGRATION));

      const store = createStore(database);
      const bot = { principalKind: 'bot' as const, principalId: 'b_ci' };
      const human = { principalKind: 'human' as const, principalId: 'u_bob' };
      expect((await store.principalFeeds.listAfter(bot, 0, 10)).map((r) => [r.feedSeq, r.notificationId])).to.deep.equal([
        [1, '01A'],
        [2, '01B'],
        [3, '01D'],
        [4, '01C'],
        [5, '01E'],
      ]);
      expect((await store.principalFeeds.listAfter(human, 0, 10)).map((r) => [r.feedSeq, r.notificationId])).to.deep.equal([
        [1, '01F'],
        [2, '01G'],
      ]);
      // b_ci acknowledged 01A, 01B, 01D but not 01C (R2 seq 2): its feed checkpoint is 3. u_bob acknowledged all.
      expect(await store.principalFeeds.find(bot)).to.deep.equal({ feedKey: 'feed:bot:b_ci', ...bot, lastSeq: 5, ackSeq: 3 });
      expect(await store.principalFeeds.find(human)).to.deep.equal({ feedKey: 'feed:human:u_bob', ...human, lastSeq: 2, ackSeq: 2 });
      const unnumbered = await database.db.execute(sql`SELECT count(*)::int AS n FROM notifications WHERE feed_seq IS NULL`);
      expect(rowsOf<{ n: number }>(unnumbered)).to.deep.equal([{ n: 0 }]);

      // The next notification continues the feed.
      const next = await store.notifications.append(
        { repositoryId: 'R2', ...bot },
        { messageId: 'M-next', roomId: 'ROOM', branchId: null, senderKind: 'user', senderId: 'u_alice', spans: [] },
        { now: new Date(), outboxPayload: () => '{}' },
      );
      expect(next.kind === 'created' && [next.notification.seq, next.feed.feedSeq]).to.deep.equal([3, 6]);
    });
  });
}
