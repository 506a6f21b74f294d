import { expect } from 'chai';
import { sql } from 'drizzle-orm';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshTargets, type FreshDatabase } from '../test/targets.ts';
import { migrate } from './migrate.ts';
import { rowsOf } from './sql-script.ts';
import { sqlFileNames, STORE_SQL_SOURCES } from './sql-sources.ts';

const SEARCH_MIGRATION = '0010_message_search.sql';

for (const target of freshTargets) {
  describe(`migration ${SEARCH_MIGRATION} on ${target.name}: existing messages become searchable`, function () {
    this.timeout(120_000);
    let fresh: FreshDatabase;
    let before: string;

    beforeEach(async () => {
      fresh = await target.open();
      before = await mkdtemp(join(tmpdir(), 'chat-before-search-'));
      for (const file of sqlFileNames(STORE_SQL_SOURCES.migrationsDir).filter((name) => name < SEARCH_MIGRATION)) {
        await copyFile(join(STORE_SQL_SOURCES.migrationsDir, file), join(before, file));
      }
    });
    afterEach(async () => {
      await fresh.cleanup();
      await rm(before, { recursive: true, force: true });
    });

    it('fills search_text of the messages stored before it as the append statement fills it, NUL bodies included', async () => {
      const { database } = fresh;
      await migrate(database, { ...STORE_SQL_SOURCES, migrationsDir: before });
      const bodies = ['Rename  parse_Config\n\tin `src/App.ts`', 'a\u0000B\u0000\u0000c é ÉCOLE', ''];
      await database.db.execute(sql`INSERT INTO rooms (room_id, scope_key, repository_id, kind, created_at) VALUES ('R', 'repo:X', 'X', 'repository', now())`);
      for (const [i, body] of bodies.entries()) {
        await database.db.execute(sql`INSERT INTO messages (room_id, seq, message_id, repository_id, sender_kind, sender_id, request_id,
            idempotency_key, body_markdown, body_bytes, rendered_html, created_at)
          VALUES ('R', ${i + 1}, ${`M${i}`}, 'X', 'user', 'u_alice', 'r', ${`k${i}`}, ${Buffer.from(body, 'utf8')}, 1, '', now())`);
      }

      // The search migration, and the ones after it.
      expect((await migrate(database)).migrations[0]).to.equal(SEARCH_MIGRATION);

      const rows = rowsOf<{ search_text: string; by_function: string }>(
        await database.db.execute(sql`SELECT search_text, chat_message_search_text(body_markdown) AS by_function FROM messages ORDER BY seq`),
      );
      expect(rows.map((r) => r.search_text)).to.deep.equal(['rename parse_config in `src/app.ts`', 'abc é École', '']);
      for (const row of rows) expect(row.search_text).to.equal(row.by_function);
    });
  });
}
