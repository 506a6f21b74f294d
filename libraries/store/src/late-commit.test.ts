import { expect } from 'chai';
import pg from 'pg';
import { ulid } from 'ulid';
import { ensureTestSchema, TEST_DATABASE_URL } from '../test/targets.ts';
import { createStore, migrate, openDatabase, type Database, type NewMessage, type Store } from './index.ts';

/**
 * Reliability test 2 (late commit): a slow append transaction overlapping fast ones, from separate
 * connection pools as separate API processes would have, while a reader pages the room. A message
 * that commits late must never sort before one the reader has already seen.
 */
describe('late commit (reliability test 2) on postgres', function () {
  this.timeout(60_000);
  const marker = `slow-${ulid()}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  const databases: Database[] = [];
  let stores: Store[];

  before(async function () {
    await ensureTestSchema();
    await admin.connect();
    for (let i = 0; i < 3; i++) databases.push(await openDatabase({ kind: 'postgres', url: TEST_DATABASE_URL, poolSize: 4 }));
    await migrate(databases[0]!);
    stores = databases.map(createStore);
    // Only this test's marked appends sleep inside their transaction, holding whatever they hold.
    await admin.query(`CREATE OR REPLACE FUNCTION chat_test_slow_insert() RETURNS trigger AS $$
      BEGIN PERFORM pg_sleep(0.4); RETURN NEW; END $$ LANGUAGE plpgsql`);
    await admin.query(`CREATE TRIGGER chat_test_slow_insert BEFORE INSERT ON messages FOR EACH ROW
      WHEN (NEW.request_id = '${marker}') EXECUTE FUNCTION chat_test_slow_insert()`);
  });

  after(async function () {
    await admin.query('DROP TRIGGER IF EXISTS chat_test_slow_insert ON messages');
    await admin.end();
    for (const database of databases) await database.close();
  });

  const message = (slow: boolean): NewMessage => ({
    senderKind: 'user',
    senderId: 'u_writer',
    requestId: slow ? marker : ulid(),
    idempotencyKey: ulid(),
    bodyMarkdown: slow ? 'slow' : 'fast',
    bodyBytes: 4,
    renderedHtml: '<p>x</p>',
    mentions: null,
    authorizationDecisionId: null,
    authorizingSubjectId: null,
    authorizingSubjectKind: null,
    botCredentialId: null,
    botGrantId: null,
  });
  const options = () => ({ newRoomId: ulid(), now: new Date() });

  it('never lets a reader skip or reorder a message that commits late', async function () {
    const scope = { repositoryId: ulid(), branchId: null };
    await stores[0]!.messages.append(scope, message(false), options());
    const roomId = (await stores[0]!.rooms.find(scope))!.roomId;

    let writing = true;
    const observations: string[][] = [];
    const reader = (async () => {
      while (writing) {
        const rows = await stores[2]!.messages.listAfter(roomId, 0, 1000);
        observations.push(rows.map((r) => r.messageId));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const writers = [0, 1].map(async (w) => {
      for (let i = 0; i < 6; i++) await stores[w]!.messages.append(scope, message(i % 3 === w), options());
    });
    await Promise.all(writers);
    writing = false;
    await reader;

    const final = await stores[2]!.messages.listAfter(roomId, 0, 1000);
    expect(final.map((m) => m.seq)).to.deep.equal(final.map((_, i) => i + 1));
    const sorted = [...final].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.messageId < b.messageId ? -1 : 1));
    expect(sorted.map((m) => m.messageId)).to.deep.equal(final.map((m) => m.messageId));
    const finalIds = final.map((m) => m.messageId);
    let skipped = 0;
    for (const seen of observations) {
      // Every snapshot a reader took is a prefix of the final order: nothing committed later slots in before it.
      if (seen.some((id, i) => finalIds[i] !== id)) skipped++;
    }
    expect(observations.length).to.be.greaterThan(10);
    expect(final.some((m) => m.requestId === marker)).to.equal(true);
    expect(skipped, 'snapshots that were not a prefix of the final order').to.equal(0);
  });
});
