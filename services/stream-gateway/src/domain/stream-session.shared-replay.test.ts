import { expect } from 'chai';
import type { CursorBinding } from '@chat/contracts';
import type { MessageRow } from '@chat/store';
import { GatewayHarness, roomEventsPath, TARGETS } from '../../test/gateway-harness.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

/** Streams of one room resuming from the same event at once, as after a gateway loss. */
const STREAMS = 20;
const MISSED = 50;

for (const target of TARGETS) {
  describe(`replay shared by the streams of a room that resume together (${target})`, function () {
    this.timeout(60_000);
    // One reader holds every stream: its cap (16 by default) above them.
    const h = new GatewayHarness({ target, repositories: 1, caps: { principalCap: STREAMS } });
    const clients: SseClient[] = [];
    let restore: (() => void) | undefined;
    before(() => h.start());
    after(async () => {
      for (const c of clients) c.close();
      restore?.();
      await h.stop();
    });

    it(`${STREAMS} streams resuming from one cursor get every missed message, and the cursors of the pages they read together are made once, not once per stream`, async () => {
      const repo = h.repository();
      const scope = { repositoryId: repo.id, branchId: null };
      const rows: MessageRow[] = [];
      for (let i = 0; i <= MISSED; i += 1) rows.push(await h.append(scope, `missed ${i}`, { publish: false }));
      const resumeFrom = h.cursorOf(rows[0]!);
      const missedIds = rows.slice(1).map((r) => h.cursorOf(r));

      // Counts the cursors made for this room's messages (the MAC each costs is what sharing saves).
      const { cursors } = h.gateway.deps;
      const encode = cursors.encode.bind(cursors);
      let made = 0;
      cursors.encode = (binding: CursorBinding, position: number) => {
        if (binding.kind === 'room' && binding.roomId === rows[0]!.roomId) made += 1;
        return encode(binding, position);
      };
      restore = () => {
        cursors.encode = encode;
      };

      const token = await h.token();
      clients.push(...(await Promise.all(Array.from({ length: STREAMS }, () => openSse(h.url, roomEventsPath(repo.id), token, { 'last-event-id': resumeFrom })))));
      for (const client of clients) {
        expect(client.response.status).to.equal(200);
        await client.waitForMessages(MISSED, 30_000);
        expect(client.messages().map((e) => e.id)).to.deep.equal(missedIds);
      }
      // One per message and stream without sharing; streams that read a page together share its
      // frames (how many read together depends on the timing of their opens: 6 or 7 reads for the 20
      // streams in most runs here).
      expect(made, 'cursors made for the replays').to.be.below(STREAMS * MISSED);
    });
  });
}
