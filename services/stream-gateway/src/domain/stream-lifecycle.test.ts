import { expect } from 'chai';
import type { MessageRow } from '@chat/store';
import { GatewayHarness, roomEventsPath, TARGETS } from '../../test/gateway-harness.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

const repoScope = (repositoryId: string) => ({ repositoryId, branchId: null });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventuallyTrue(check: () => boolean, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not true within ${withinMs} ms`);
    await sleep(20);
  }
}

for (const target of TARGETS) {
  describe(`stream lifecycle (${target})`, function () {
    this.timeout(60_000);

    describe('bounded by caps and client speed', () => {
      const h = new GatewayHarness({ target, engine: { maxEvents: 20, maxBytes: 64 * 1024, tickMs: 50 }, caps: { principalCap: 2, roomCap: 3, retryAfterSeconds: 3 } });
      const clients: SseClient[] = [];
      before(() => h.start());
      after(() => h.stop());
      afterEach(async () => {
        for (const c of clients.splice(0)) c.close();
        await sleep(100);
      });

      it('closes a consumer that stops reading, without anything invented, and it resumes with nothing lost', async () => {
        const repo = h.repository();
        const scope = repoScope(repo.id);
        const slow = await openSse(h.url, roomEventsPath(repo.id), await h.token());
        clients.push(slow);
        slow.pause();
        const rows: MessageRow[] = [];
        const body = 'x'.repeat(16_000);
        for (let i = 0; i < 600 && h.gateway.hub.stats().sessions > 0; i++) rows.push(await h.append(scope, `${i} ${body}`));
        expect(h.gateway.hub.stats().sessions, 'slow stream closed by the server').to.equal(0);
        slow.resume();
        await slow.waitForEnd(10_000);
        const seen = slow.messages();
        const cursors = rows.map((r) => h.cursorOf(r));
        expect(seen.map((e) => e.id)).to.deep.equal(cursors.slice(0, seen.length));
        expect(slow.events.every((e) => e.event === 'message')).to.equal(true);

        const resumeHeaders: Record<string, string> = seen.length > 0 ? { 'last-event-id': seen.at(-1)!.id! } : {};
        const again = await openSse(h.url, roomEventsPath(repo.id), await h.token(), resumeHeaders);
        clients.push(again);
        await again.waitForMessages(rows.length - seen.length, 15_000);
        expect([...seen, ...again.messages()].map((e) => e.id)).to.deep.equal(cursors);
      });

      it('refuses streams over the principal and room caps with 429 and an integer Retry-After, and frees slots on close', async () => {
        const repo = h.repository();
        const alice = await h.token();
        const path = roomEventsPath(repo.id);
        const held = [await openSse(h.url, path, alice), await openSse(h.url, path, alice)];
        clients.push(...held);
        const third = await openSse(h.url, path, alice);
        expect(third.response.status).to.equal(429);
        expect(third.response.body.error.code).to.equal('STREAM_PRINCIPAL_LIMIT');
        expect(third.response.headers['retry-after']).to.match(/^[1-9][0-9]*$/);
        const bob = await openSse(h.url, path, await h.token('u_bob'));
        clients.push(bob);
        expect(bob.response.status).to.equal(200);
        const bot = await openSse(h.url, path, await h.botToken());
        expect(bot.response.status).to.equal(429);
        expect(bot.response.body.error.code).to.equal('STREAM_ROOM_LIMIT');
        expect(bot.response.headers['retry-after']).to.match(/^[1-9][0-9]*$/);

        held[0]!.close();
        await sleep(200);
        const replacement = await openSse(h.url, path, alice);
        clients.push(replacement);
        expect(replacement.response.status).to.equal(200);
      });
    });

    describe('rotation and shutdown', () => {
      const h = new GatewayHarness({ target, engine: { maxStreamAgeMs: 1000, tickMs: 50 } });
      before(() => h.start());
      after(() => h.stop());

      it('sends handoff at the maximum stream age and closes', async () => {
        const client = await openSse(h.url, roomEventsPath(h.repository().id), await h.token());
        const opened = Date.now();
        await client.waitForEnd(3000);
        expect(Date.now() - opened).to.be.within(700, 1600);
        expect(client.events.map((e) => e.event)).to.deep.equal(['handoff']);
        expect(JSON.parse(client.events[0]!.data)).to.deep.equal({ reason: 'stream_rotation' });
        expect(client.events[0]!.id).to.equal(undefined);
      });

      it('drains: hands every stream off within the window, then refuses new streams', async () => {
        const repo = h.repository();
        const token = await h.token();
        const clients = await Promise.all(Array.from({ length: 5 }, () => openSse(h.url, roomEventsPath(repo.id), token)));
        const started = Date.now();
        await h.gateway.drain(300);
        expect(Date.now() - started).to.be.below(900);
        for (const c of clients) {
          await c.waitForEnd(1000);
          expect(c.events.at(-1)?.event).to.equal('handoff');
        }
        expect(h.gateway.hub.stats().sessions).to.equal(0);
        const refused = await openSse(h.url, roomEventsPath(repo.id), token);
        expect(refused.response.status).to.equal(503);
        expect(refused.response.body.error.code).to.equal('STREAM_UNAVAILABLE');
      });
    });

    describe('heartbeats', () => {
      const HEARTBEAT_MS = 2000;
      const TICK_MS = 20;
      /** How late a timer may fire on a busy machine; lateness is not what this test is about. */
      const LATE_MS = 500;
      const h = new GatewayHarness({ target, engine: { heartbeatMs: HEARTBEAT_MS, tickMs: TICK_MS }, caps: { principalCap: 100, roomCap: 100, retryAfterSeconds: 1 } });
      before(() => h.start());
      after(() => h.stop());

      it('spreads the heartbeats of streams opened together over the interval, each beating every interval after its first', async () => {
        const repo = h.repository();
        const token = await h.token();
        const openedAt = Date.now();
        const clients = await Promise.all(Array.from({ length: 30 }, () => openSse(h.url, roomEventsPath(repo.id), token)));
        const allOpenAt = Date.now();
        try {
          expect(clients.map((c) => c.response.status)).to.deep.equal(clients.map(() => 200));
          const beats = async (c: SseClient) => {
            await eventuallyTrue(() => c.events.filter((e) => e.event === 'heartbeat').length >= 2, 3 * HEARTBEAT_MS);
            return c.events.filter((e) => e.event === 'heartbeat').map((e) => Date.parse(JSON.parse(e.data).serverTime as string));
          };
          const times = await Promise.all(clients.map(beats));
          const firsts = times.map((t) => t[0]!);
          for (const [first, second] of times) {
            expect(first! - openedAt, 'first heartbeat after its open').to.be.within(HEARTBEAT_MS / 2 - TICK_MS, allOpenAt - openedAt + HEARTBEAT_MS + LATE_MS);
            expect(second! - first!, 'then every interval').to.be.within(HEARTBEAT_MS - TICK_MS, HEARTBEAT_MS + LATE_MS);
          }
          // 30 first heartbeats uniform over a second: all in one 400 ms stretch has odds of ~1e-10.
          expect(Math.max(...firsts) - Math.min(...firsts), 'spread of the first heartbeats').to.be.above(400);
        } finally {
          for (const c of clients) c.close();
        }
      });
    });
  });
}
