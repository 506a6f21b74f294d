import { expect } from 'chai';
import type { NotificationRow } from '@chat/store';
import { GatewayHarness, roomEventsPath, TARGETS } from '../../test/gateway-harness.ts';
import { acknowledge, bot, expectedNotification, human, inboxCursorOf, inboxEventsPath, notify, publishNotification } from '../../test/inbox-fixture.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const notifications = (client: SseClient) => client.events.filter((e) => e.event === 'notification');
const waitForNotifications = (client: SseClient, count: number, timeoutMs = 5000) =>
  client.waitFor((c) => notifications(c).length >= count, timeoutMs, `${count} notifications`);

for (const target of TARGETS) {
  describe(`inbox stream (${target})`, function () {
    this.timeout(30_000);
    // Room caps below the inbox cap: inbox streams are counted apart from room streams.
    const INBOX_CAP = 3;
    const h = new GatewayHarness({ target, engine: { heartbeatMs: 300, recheckMs: 300 }, caps: { principalCap: 2, roomCap: 2, inboxPrincipalCap: INBOX_CAP } });
    const clients: SseClient[] = [];
    const open = async (path: string, token: string | undefined, headers: Record<string, string> = {}) => {
      const client = await openSse(h.url, path, token, headers);
      clients.push(client);
      return client;
    };
    const seqsOf = (client: SseClient, owner: ReturnType<typeof human>, rows: NotificationRow[]) => {
      const bySeq = new Map(rows.map((r) => [inboxCursorOf(h, owner, r.seq), r.seq]));
      return notifications(client).map((e) => bySeq.get(e.id ?? '') ?? -1);
    };

    before(() => h.start());
    after(() => h.stop());
    afterEach(() => {
      for (const c of clients.splice(0)) c.close();
    });

    describe('refusals before the stream opens', () => {
      it('answers 401 without or with a bad token, in the envelope', async () => {
        const repo = h.repository();
        const none = await open(inboxEventsPath(repo.id), undefined, { 'x-request-id': 'inbox-401' });
        expect(none.response.status).to.equal(401);
        expect(none.response.body.error).to.include({ code: 'AUTHENTICATION_REQUIRED', requestId: 'inbox-401' });
        expect(none.response.headers['x-request-id']).to.equal('inbox-401');
        const bad = await open(inboxEventsPath(repo.id), 'a.b.c');
        expect(bad.response.body.error.code).to.equal('TOKEN_REJECTED');
      });

      it('answers 403 without read access, before looking at the cursor or Accept, identically whether the inbox exists or not', async () => {
        const [withInbox, without] = [h.repository(), h.repository()];
        await notify(h, human(withInbox.id, 'u_eve'));
        const eve = await h.token('u_eve');
        const a = await open(inboxEventsPath(withInbox.id), eve, { 'x-request-id': 'same', accept: 'application/json', 'last-event-id': 'x' });
        const b = await open(inboxEventsPath(without.id), eve, { 'x-request-id': 'same' });
        expect(a.response.status).to.equal(403);
        expect(a.response.body).to.deep.equal(b.response.body);
        expect(a.response.body.error.code).to.equal('AUTHORIZATION_DENIED');
      });

      it('refuses a non-ULID repository and a non-stream Accept with 400', async () => {
        const token = await h.token();
        const scope = await open(inboxEventsPath('not-a-ulid'), token);
        expect(scope.response.status).to.equal(400);
        expect(scope.response.body.error.code).to.equal('SCOPE_INVALID');
        const json = await open(inboxEventsPath(h.repository().id), token, { accept: 'application/json' });
        expect(json.response.status).to.equal(400);
        expect(json.response.body.error.code).to.equal('REQUEST_INVALID');
      });

      it('refuses conflicting resume inputs (CURSOR_CONFLICT) and forged or foreign cursors (CURSOR_INVALID)', async () => {
        const token = await h.token();
        const repo = h.repository();
        const owner = human(repo.id);
        await notify(h, owner);
        await notify(h, owner);
        const [c1, c2] = [inboxCursorOf(h, owner, 1), inboxCursorOf(h, owner, 2)];
        const conflict = await open(`${inboxEventsPath(repo.id)}?cursor=${c1}`, token, { 'last-event-id': c2 });
        expect(conflict.response.status).to.equal(400);
        expect(conflict.response.body.error.code).to.equal('CURSOR_CONFLICT');
        const other = h.repository();
        const foreign = {
          'forged': 'id: forged',
          "another principal's inbox": inboxCursorOf(h, human(repo.id, 'u_bob'), 1),
          "a bot's inbox of the same id": inboxCursorOf(h, bot(repo.id, 'u_alice'), 1),
          "the caller's inbox in another repository": inboxCursorOf(h, human(other.id), 1),
          'a room': h.cursorOf(await h.append({ repositoryId: repo.id, branchId: null }, 'room message')),
        };
        for (const [what, cursor] of Object.entries(foreign)) {
          const refused = await open(inboxEventsPath(repo.id), token, { 'last-event-id': cursor });
          expect(refused.response.status, what).to.equal(400);
          expect(refused.response.body.error.code, what).to.equal('CURSOR_INVALID');
          expect(JSON.stringify(refused.response.body), what).not.to.include('forged');
        }
        const equal = await open(`${inboxEventsPath(repo.id)}?cursor=${c1}`, token, { 'last-event-id': c1 });
        expect(equal.response.status).to.equal(200);
        await waitForNotifications(equal, 1);
        expect(notifications(equal).map((e) => e.id)).to.deep.equal([c2]);
      });

      it('answers 405 for other methods', async () => {
        const response = await fetch(`${h.url}${inboxEventsPath(h.repository().id)}`, { method: 'POST' });
        expect(response.status).to.equal(405);
        expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('REQUEST_INVALID');
      });
    });

    describe('opening, replay and resume', () => {
      it('opens on an inbox never notified (no 409, nothing created), then delivers its first notification live', async () => {
        const repo = h.repository();
        const owner = human(repo.id);
        const client = await open(inboxEventsPath(repo.id), await h.token(), { 'x-request-id': 'inbox-open' });
        expect(client.response.status).to.equal(200);
        expect(client.response.headers['content-type']).to.match(/^text\/event-stream/);
        expect(client.response.headers['cache-control']).to.equal('no-cache, no-transform');
        expect(client.response.headers['x-request-id']).to.equal('inbox-open');
        expect(await h.gateway.deps.store.inboxes.find(owner)).to.equal(null);
        const row = await notify(h, owner);
        await waitForNotifications(client, 1);
        const [event] = notifications(client);
        expect(event!.id).to.equal(inboxCursorOf(h, owner, 1));
        expect(JSON.parse(event!.data)).to.deep.equal(expectedNotification(h, owner, row, 0));
      });


      it('replays from the start in order: id the durable cursor, data the NotificationResponse with acknowledged against the checkpoint', async () => {
        const repo = h.repository();
        const owner = human(repo.id);
        const rows: NotificationRow[] = [];
        for (let i = 0; i < 5; i++) rows.push(await notify(h, owner, { publish: i % 2 === 0, ...(i === 3 ? { branchId: repo.activeBranch } : {}) }));
        await acknowledge(h, owner, 0, 2);
        const client = await open(inboxEventsPath(repo.id), await h.token());
        await waitForNotifications(client, 5);
        expect(notifications(client).map((e) => e.id)).to.deep.equal(rows.map((r) => inboxCursorOf(h, owner, r.seq)));
        const data = notifications(client).map((e) => JSON.parse(e.data));
        expect(data).to.deep.equal(rows.map((r) => expectedNotification(h, owner, r, 2)));
        expect(data.map((d) => d.acknowledged)).to.deep.equal([true, true, false, false, false]);
        expect(data[3].branchId).to.equal(repo.activeBranch);
      });

      it('replays more than one page', async () => {
        const repo = h.repository();
        const owner = human(repo.id);
        const rows: NotificationRow[] = [];
        for (let i = 0; i < 250; i++) rows.push(await notify(h, owner, { publish: false }));
        const client = await open(inboxEventsPath(repo.id), await h.token());
        await waitForNotifications(client, 250, 15_000);
        expect(seqsOf(client, owner, rows)).to.deep.equal(rows.map((r) => r.seq));
      });

      it('resumes after Last-Event-ID or ?cursor= with no gap and no repeat', async () => {
        const repo = h.repository();
        const owner = human(repo.id, 'u_bob');
        const rows: NotificationRow[] = [];
        for (let i = 0; i < 8; i++) rows.push(await notify(h, owner));
        const token = await h.token('u_bob');
        const cursor = inboxCursorOf(h, owner, 3);
        for (const client of [await open(inboxEventsPath(repo.id), token, { 'last-event-id': cursor }), await open(`${inboxEventsPath(repo.id)}?cursor=${cursor}`, token)]) {
          await waitForNotifications(client, 5);
          await sleep(100);
          expect(seqsOf(client, owner, rows)).to.deep.equal([4, 5, 6, 7, 8]);
        }
      });

      it("streams a bot's own inbox, never a human's of the same repository", async () => {
        const repo = h.repository();
        const botOwner = bot(repo.id);
        await notify(h, human(repo.id, 'b_ci'));
        const row = await notify(h, botOwner);
        const client = await open(inboxEventsPath(repo.id), await h.botToken());
        await waitForNotifications(client, 1);
        await sleep(200);
        expect(notifications(client).map((e) => JSON.parse(e.data))).to.deep.equal([expectedNotification(h, botOwner, row, 0)]);
      });
    });

    describe('live delivery', () => {
      it('delivers concurrent notifications once each, in order, after the replay, and nothing of other inboxes', async () => {
        const repo = h.repository();
        const owner = human(repo.id);
        const rows: NotificationRow[] = [await notify(h, owner)];
        const client = await open(inboxEventsPath(repo.id), await h.token());
        await Promise.all([
          ...Array.from({ length: 4 }, async () => {
            for (let i = 0; i < 10; i++) rows.push(await notify(h, owner));
          }),
          (async () => {
            for (let i = 0; i < 10; i++) await notify(h, human(repo.id, 'u_bob'));
          })(),
        ]);
        await waitForNotifications(client, 41, 10_000);
        await sleep(200);
        expect(seqsOf(client, owner, rows)).to.deep.equal(Array.from({ length: 41 }, (_, i) => i + 1));
        expect(new Set(notifications(client).map((e) => JSON.parse(e.data).targetId))).to.deep.equal(new Set(['u_alice']));
      });

      it('fills a gap from the store, drops repeats, and live data equals the replay form', async () => {
        const repo = h.repository();
        const owner = human(repo.id);
        const client = await open(inboxEventsPath(repo.id), await h.token());
        const rows = [await notify(h, owner), await notify(h, owner, { publish: false }), await notify(h, owner, { publish: false })];
        for (const i of [2, 0, 2, 0]) await publishNotification(h, rows[i]!);
        await waitForNotifications(client, 3);
        await sleep(200);
        expect(seqsOf(client, owner, rows)).to.deep.equal([1, 2, 3]);
        expect(notifications(client).map((e) => JSON.parse(e.data))).to.deep.equal(rows.map((r) => expectedNotification(h, owner, r, 0)));
      });

      it('marks a live notification acknowledged when the checkpoint the stream read already covers it', async () => {
        const repo = h.repository();
        const owner = human(repo.id);
        const rows = [await notify(h, owner), await notify(h, owner, { publish: false })];
        await acknowledge(h, owner, 0, 2);
        const client = await open(inboxEventsPath(repo.id), await h.token());
        await waitForNotifications(client, 2);
        // A repeat of an already acknowledged seq is dropped; a new one reads false.
        await publishNotification(h, rows[1]!);
        rows.push(await notify(h, owner));
        await waitForNotifications(client, 3);
        expect(notifications(client).map((e) => JSON.parse(e.data).acknowledged)).to.deep.equal([true, true, false]);
      });

      it('sends heartbeats without an id', async () => {
        const client = await open(inboxEventsPath(h.repository().id), await h.token());
        await client.waitFor((c) => c.events.some((e) => e.event === 'heartbeat'), 3000, 'heartbeat');
        const beat = client.events.find((e) => e.event === 'heartbeat')!;
        expect(beat.id).to.equal(undefined);
        expect(Object.keys(JSON.parse(beat.data))).to.deep.equal(['serverTime']);
      });
    });

    describe('the per-principal inbox stream cap', () => {
      // u_carol is used by no other test, so every slot of hers is one this test holds.
      it('refuses the stream past the cap across repositories with 503 STREAM_UNAVAILABLE, Retry-After and the envelope; other principals and room streams are counted apart; a closed stream frees its slot', async () => {
        const [a, b, c] = [h.repository(), h.repository(), h.repository()];
        const carol = await h.token('u_carol');
        const held = [await open(inboxEventsPath(a.id), carol), await open(inboxEventsPath(a.id), carol), await open(inboxEventsPath(b.id), carol)];
        expect(held.map((client) => client.response.status)).to.deep.equal(Array(INBOX_CAP).fill(200));

        const refused = await open(inboxEventsPath(c.id), carol, { 'x-request-id': 'inbox-cap' });
        expect(refused.response.status).to.equal(503);
        expect(refused.response.body.error).to.include({ code: 'STREAM_UNAVAILABLE', requestId: 'inbox-cap' });
        expect(refused.response.body.error.message).to.match(/inbox streams/);
        expect(refused.response.headers['x-request-id']).to.equal('inbox-cap');
        expect(String(refused.response.headers['retry-after'])).to.match(/^[1-9][0-9]*$/);

        // Another principal's inbox streams, and carol's room streams, take no inbox slot of hers.
        expect((await open(inboxEventsPath(c.id), await h.token('u_bob'))).response.status).to.equal(200);
        expect((await open(roomEventsPath(c.id), carol)).response.status).to.equal(200);
        expect((await open(inboxEventsPath(c.id), carol)).response.status).to.equal(503);

        // A closed stream gives its slot back (the server sees the close, then releases).
        held[0]!.close();
        let reopened: SseClient | undefined;
        for (const deadline = Date.now() + 5000; !reopened && Date.now() < deadline; ) {
          const attempt = await open(inboxEventsPath(c.id), carol);
          if (attempt.response.status === 200) reopened = attempt;
          else await sleep(50);
        }
        expect(reopened, 'a freed slot').not.to.equal(undefined);
        expect((await open(inboxEventsPath(c.id), carol)).response.status).to.equal(503);
      });

      it('keeps no slot for a stream refused before it opened (a bad cursor, a wrong Accept)', async () => {
        const repo = h.repository();
        const carol = await h.token('u_carol');
        for (let i = 0; i < INBOX_CAP + 2; i++) {
          expect((await open(inboxEventsPath(repo.id), carol, { 'last-event-id': 'forged' })).response.status).to.equal(400);
          expect((await open(inboxEventsPath(repo.id), carol, { accept: 'application/json' })).response.status).to.equal(400);
        }
        // The previous test's streams closed in afterEach; their slots free once the server sees it.
        let statuses: number[] = [];
        for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
          for (const c of clients.splice(0)) c.close();
          statuses = [];
          for (let i = 0; i < INBOX_CAP; i++) statuses.push((await open(inboxEventsPath(repo.id), carol)).response.status);
          if (statuses.every((status) => status === 200)) break;
          await sleep(100);
        }
        expect(statuses).to.deep.equal(Array(INBOX_CAP).fill(200));
      });
    });

    describe('authority over time', () => {
      it('sends reauthorize and closes when read access is revoked', async () => {
        const repo = h.repository();
        const client = await open(inboxEventsPath(repo.id), await h.token('u_bob'));
        h.setMembers(repo.id, { u_alice: 'write' });
        await client.waitForEnd(5000);
        const last = client.events.at(-1)!;
        expect(last.event).to.equal('reauthorize');
        expect(JSON.parse(last.data)).to.deep.equal({ reason: 'access_revoked' });
        expect(last.id).to.equal(undefined);
      });

      it('answers 503 AUTHORIZATION_UNAVAILABLE when core is down, and sends reauthorize to open streams', async () => {
        const repo = h.repository();
        const client = await open(inboxEventsPath(repo.id), await h.token());
        h.core.setFaults({ authorization: 'unavailable' });
        try {
          await client.waitForEnd(5000);
          expect(JSON.parse(client.events.at(-1)!.data)).to.deep.equal({ reason: 'authorization_unavailable' });
          const refused = await open(inboxEventsPath(repo.id), await h.token());
          expect(refused.response.status).to.equal(503);
          expect(refused.response.body.error.code).to.equal('AUTHORIZATION_UNAVAILABLE');
        } finally {
          h.core.setFaults({ authorization: 'ok' });
        }
      });

      it('closes before the token expires', async () => {
        const client = await open(inboxEventsPath(h.repository().id), await h.token('u_alice', 7));
        await client.waitForEnd(6000);
        expect(JSON.parse(client.events.at(-1)!.data)).to.deep.equal({ reason: 'token_expiring' });
      });
    });

    describe('after the suite', () => {
      it('leaves room streams to their caps and forgets every closed stream', async () => {
        // The room caps still hold for room streams on the same gateway.
        const repo = h.repository();
        const token = await h.token();
        const rooms = [await open(roomEventsPath(repo.id), token), await open(roomEventsPath(repo.id), token), await open(roomEventsPath(repo.id), token)];
        expect(rooms.map((c) => c.response.status)).to.deep.equal([200, 200, 429]);
        for (const c of clients.splice(0)) c.close();
        await sleep(300);
        expect(h.gateway.hub.stats()).to.include({ sessions: 0, scopes: 0, ticking: false });
      });
    });
  });

  describe(`inbox stream rotation (${target})`, function () {
    this.timeout(20_000);
    const h = new GatewayHarness({ target, repositories: 2, engine: { maxStreamAgeMs: 600, heartbeatMs: 5000, tickMs: 50 } });
    before(() => h.start());
    after(() => h.stop());

    it('sends handoff before a planned rotation, and the client resumes from its last cursor with nothing lost', async () => {
      const repo = h.repository();
      const owner = human(repo.id);
      const token = await h.token();
      const first = await openSse(h.url, inboxEventsPath(repo.id), token);
      const rows = [await notify(h, owner), await notify(h, owner)];
      await first.waitForEnd(5000);
      expect(first.events.at(-1)?.event).to.equal('handoff');
      expect(JSON.parse(first.events.at(-1)!.data)).to.deep.equal({ reason: 'stream_rotation' });
      rows.push(await notify(h, owner));
      const again = await openSse(h.url, inboxEventsPath(repo.id), token, { 'last-event-id': notifications(first).at(-1)!.id! });
      await waitForNotifications(again, 1);
      again.close();
      expect([...notifications(first), ...notifications(again)].map((e) => e.id)).to.deep.equal(rows.map((r) => inboxCursorOf(h, owner, r.seq)));
    });
  });
}
