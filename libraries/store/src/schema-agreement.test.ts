import { expect } from 'chai';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { testTargets } from '../test/targets.ts';
import { inboxes, notifications } from './inbox.schema.ts';
import { mentionFanout } from './mention-fanout.schema.ts';
import { principalFeeds } from './principal-feed.schema.ts';
import { rowsOf } from './sql-script.ts';
import { messages, outbox, rooms, serviceKeys } from './schema.ts';

const TABLES: PgTable[] = [serviceKeys, rooms, messages, outbox, inboxes, notifications, principalFeeds, mentionFanout];

/**
 * The SQL migrations are the source of truth for the database; the drizzle tables mirror them for
 * typed queries. This keeps the two from drifting: every drizzle column exists with the same
 * nullability, and every migrated column is known to drizzle.
 */
for (const target of testTargets) {
  describe(`drizzle schema agrees with the migrations on ${target.name}`, function () {
    let opened: Awaited<ReturnType<typeof target.open>>;
    before(async () => {
      opened = await target.open();
    });
    after(async () => opened.cleanup());

    for (const table of TABLES) {
      const config = getTableConfig(table);
      it(`table ${config.name}`, async () => {
        const result = await opened.database.db.execute(sql`
          SELECT column_name, is_nullable FROM information_schema.columns
          WHERE table_name = ${config.name} AND table_schema = current_schema()`);
        const actual = new Map(rowsOf<{ column_name: string; is_nullable: string }>(result).map((r) => [r.column_name, r.is_nullable === 'YES']));
        const declared = new Map(config.columns.map((c) => [c.name, !c.notNull]));
        expect([...actual.keys()].sort(), 'columns').to.deep.equal([...declared.keys()].sort());
        for (const [name, nullable] of declared) expect(actual.get(name), `${config.name}.${name} nullable`).to.equal(nullable);
      });
    }
  });
}
