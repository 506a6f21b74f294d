import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBackbone } from '@chat/backbone';
import { createStore, migrate, openDatabase } from '@chat/store';
import { expect } from 'chai';
import { createNotifierRuntime } from './runtime.ts';
import { appendMessage, assertTotalOrder, inboxOf, listInbox, mention, messageEvents, openWorld, waitFor, type TestWorld } from '../test/notifier-harness.ts';

/** The all-in-one shape: PGlite in a folder and the in-process backbone, started in this process. */
describe('notifier embedded (PGlite, in-process backbone)', function () {
  this.timeout(60_000);
  let world: TestWorld;
  before(async () => {
    world = await openWorld();
  });
  after(async () => world.close());

  it('fans out published messages through the in-process consumer group', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'notifier-pglite-'));
    const database = await openDatabase({ kind: 'pglite', dataDir: dir });
    await migrate(database);
    const store = createStore(database);
    const backbone = new InProcessBackbone();
    const runtime = createNotifierRuntime({ resources: { store: createStore(database), backbone, core: world.coreClient, cursors: world.cursors }, logger: world.logger, settings: { sweeper: { graceMs: 3_600_000 } } });
    await runtime.start();
    try {
      const sent: string[] = [];
      const roomOf = new Map<string, string>();
      for (let i = 0; i < 20; i++) {
        const message = await appendMessage(store, { repositoryId: world.repositoryId, branchId: i % 2 ? world.branchId : null }, [mention('human', 'u_bob', 0, 4), mention('bot', 'b_ci', 5, 8)]);
        await backbone.publish(messageEvents(message));
        sent.push(message.messageId);
        roomOf.set(message.messageId, message.roomId);
      }
      // Message order holds within each room; the two rooms' notifications may interleave.
      const perRoom = (ids: string[]) => [...new Set(roomOf.values())].map((room) => ids.filter((id) => roomOf.get(id) === room));
      const keys = [inboxOf(world.repositoryId, 'human', 'u_bob'), inboxOf(world.repositoryId, 'bot', 'b_ci')];
      await waitFor('the fanout', async () => (await Promise.all(keys.map((k) => listInbox(store, k)))).every((rows) => rows.length === sent.length));
      for (const key of keys) {
        const rows = await listInbox(store, key);
        assertTotalOrder(rows);
        expect(rows.map((n) => n.messageId).sort()).to.deep.equal([...sent].sort());
        expect(perRoom(rows.map((n) => n.messageId))).to.deep.equal(perRoom(sent));
      }
      expect((await store.mentionFanout.counts()).pending).to.equal(0);
    } finally {
      await runtime.stop();
      await backbone.close();
      await database.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
