import { expect } from 'chai';
import type { MessageRow } from '@chat/store';
import { toMessageResponse } from '@chat/wire-format';
import { ulid } from 'ulid';
import { GatewayHarness, roomEventsPath, TARGETS } from '../../test/gateway-harness.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

const repoScope = (repositoryId: string) => ({ repositoryId, branchId: null });

function seqs(client: SseClient, harness: GatewayHarness, rows: MessageRow[]): number[] {
  const bySeq = new Map(rows.map((r) => [harness.cursorOf(r), r.seq]));
  return client.messages().map((e) => bySeq.get(e.id ?? '') ?? -1);
}

for (const target of TARGETS) {
  describe(`room streams (${target})`, function () {
    this.timeout(30_000);
    const h = new GatewayHarness({ target, engine: { heartbeatMs: 300, recheckMs: 300 }, caps: { principalCap: 50, roomCap: 50 } });
    const clients: SseClient[] = [];
    const open = async (path: string, token: string | undefined, headers: Record<string, string> = {}) => {
      const client = await openSse(h.url, path, token, headers);
      clients.push(client);
      return client;
    };

    before(() => h.start());
    after(() => h.stop());
    afterEach(() => {
      for (const c of clients.splice(0)) c.close();
    });

    describe('refusals before the stream opens', () => {
      it('answers 401 without or with a bad token, with the envelope and X-Request-Id', async () => {
        const repo = h.repository();
        const none = await open(roomEventsPath(repo.id), undefined, { 'x-request-id': 'req-401' });
        expect(none.response.status).to.equal(401);
        expect(none.response.body.error).to.include({ code: 'AUTHENTICATION_REQUIRED', requestId: 'req-401' });
        expect(none.response.headers['x-request-id']).to.equal('req-401');
        const bad = await open(roomEventsPath('not-a-ulid'), 'a.b.c');
        expect(bad.response.status).to.equal(401);
        expect(bad.response.body.error.code).to.equal('TOKEN_REJECTED');
      });

      it('refuses a malformed X-Request-Id and a non-ULID scope', async () => {
        const token = await h.token();
        const badId = await open(roomEventsPath(h.repository().id), token, { 'x-request-id': 'bad id!' });
        expect(badId.response.status).to.equal(400);
        expect(badId.response.body.error.code).to.equal('REQUEST_ID_INVALID');
        const badScope = await open(roomEventsPath('01ARZ3NDEKTSV4RRFFQ69G5FAV'.toLowerCase()), token);
        expect(badScope.response.body.error.code).to.equal('SCOPE_INVALID');
      });

      it('answers 403 identically for an existing and a missing room, and creates nothing', async () => {
        const [withRoom, without] = [h.repository(), h.repository()];
        await h.append(repoScope(withRoom.id), 'exists');
        const eve = await h.token('u_eve');
        const a = await open(roomEventsPath(withRoom.id), eve, { 'x-request-id': 'same' });
        const b = await open(roomEventsPath(without.id), eve, { 'x-request-id': 'same' });
        expect(a.response.status).to.equal(403);
        expect(b.response.status).to.equal(403);
        expect(a.response.body).to.deep.equal(b.response.body);
        expect(a.response.body.error.code).to.equal('AUTHORIZATION_DENIED');
        expect(await h.gateway.deps.store.rooms.find(repoScope(without.id))).to.equal(null);
      });

      it('checks authorization before the cursor, the Accept header and the room', async () => {
        const eve = await h.token('u_eve');
        const denied = await open(roomEventsPath(h.repository().id), eve, { accept: 'application/json', 'last-event-id': 'x' });
        expect(denied.response.status).to.equal(403);
      });

      it('requires Accept to allow text/event-stream', async () => {
        const token = await h.token();
        const repo = h.repository();
        const json = await open(roomEventsPath(repo.id), token, { accept: 'application/json' });
        expect(json.response.status).to.equal(400);
        expect(json.response.body.error.code).to.equal('REQUEST_INVALID');
        for (const accept of ['*/*', 'text/*']) {
          const ok = await open(roomEventsPath(repo.id), token, { accept });
          expect(ok.response.status, accept).to.equal(200);
        }
      });

      it('refuses conflicting and invalid resume inputs; equal ones are one cursor', async () => {
        const token = await h.token();
        const repo = h.repository();
        const rows = [await h.append(repoScope(repo.id), 'one'), await h.append(repoScope(repo.id), 'two')];
        const [c1, c2] = rows.map((r) => h.cursorOf(r));
        const conflict = await open(`${roomEventsPath(repo.id)}?cursor=${c1}`, token, { 'last-event-id': c2! });
        expect(conflict.response.status).to.equal(400);
        expect(conflict.response.body.error.code).to.equal('CURSOR_CONFLICT');
        const garbage = await open(roomEventsPath(repo.id), token, { 'last-event-id': 'id: forged' });
        expect(garbage.response.body.error.code).to.equal('CURSOR_INVALID');
        expect(JSON.stringify(garbage.response.body)).not.to.include('forged');
        const other = h.repository();
        const foreign = h.cursorOf(await h.append(repoScope(other.id), 'elsewhere'));
        const crossRoom = await open(roomEventsPath(repo.id), token, { 'last-event-id': foreign });
        expect(crossRoom.response.body.error.code).to.equal('CURSOR_INVALID');
        const equal = await open(`${roomEventsPath(repo.id)}?cursor=${c1}`, token, { 'last-event-id': c1! });
        expect(equal.response.status).to.equal(200);
        await equal.waitForMessages(1);
        expect(seqs(equal, h, rows)).to.deep.equal([2]);
      });

      it('refuses a cursor on a virtual room without creating it', async () => {
        const token = await h.token();
        const repo = h.repository();
        const foreign = h.cursorOf(await h.append(repoScope(h.repository().id), 'x'));
        const client = await open(roomEventsPath(repo.id), token, { 'last-event-id': foreign });
        expect(client.response.body.error.code).to.equal('CURSOR_INVALID');
        expect(await h.gateway.deps.store.rooms.find(repoScope(repo.id))).to.equal(null);
      });

      it('answers 409 STREAM_TARGET_INVALID for a virtual room of a sealed scope', async () => {
        const token = await h.token();
        const repo = h.repository();
        const deleted = await open(roomEventsPath(repo.id, repo.deletedBranch), token);
        expect(deleted.response.status).to.equal(409);
        expect(deleted.response.body.error.code).to.equal('STREAM_TARGET_INVALID');
        const archived = await open(roomEventsPath(h.archived.id), token);
        expect(archived.response.body.error.code).to.equal('STREAM_TARGET_INVALID');
        expect(await h.gateway.deps.store.rooms.find({ repositoryId: repo.id, branchId: repo.deletedBranch })).to.equal(null);
      });

      it('answers 405 for other methods', async () => {
        const response = await fetch(`${h.url}${roomEventsPath(h.repository().id)}`, { method: 'POST' });
        expect(response.status).to.equal(405);
        expect(((await response.json()) as any).error.code).to.equal('REQUEST_INVALID');
      });
    });

    describe('opening and replay', () => {
      it('materializes a virtual room and opens with the stream headers', async () => {
        const token = await h.token();
        const repo = h.repository();
        const client = await open(roomEventsPath(repo.id, repo.activeBranch), token, { 'x-request-id': 'open-1' });
        expect(client.response.status).to.equal(200);
        expect(client.response.headers['content-type']).to.match(/^text\/event-stream/);
        expect(client.response.headers['cache-control']).to.equal('no-cache, no-transform');
        expect(client.response.headers['x-accel-buffering']).to.equal('no');
        expect(client.response.headers['x-request-id']).to.equal('open-1');
        const room = await h.gateway.deps.store.rooms.find({ repositoryId: repo.id, branchId: repo.activeBranch });
        expect(room?.lastSeq).to.equal(0);
      });

      it('keeps streaming a persisted room of a sealed scope', async () => {
        await h.gateway.deps.store.rooms.materialize(repoScope(h.archived.id), { roomId: ulid(), now: new Date() });
        const client = await open(roomEventsPath(h.archived.id), await h.token());
        expect(client.response.status).to.equal(200);
      });

      it('replays from the start in order, each id the durable cursor, data the MessageResponse', async () => {
        const repo = h.repository();
        const rows: MessageRow[] = [];
        for (let i = 0; i < 5; i++) rows.push(await h.append(repoScope(repo.id), `message ${i}`, { publish: i % 2 === 0 }));
        const client = await open(roomEventsPath(repo.id), await h.botToken());
        await client.waitForMessages(5);
        expect(client.messages().map((e) => e.id)).to.deep.equal(rows.map((r) => h.cursorOf(r)));
        expect(client.messages().map((e) => JSON.parse(e.data))).to.deep.equal(rows.map((r) => toMessageResponse(r)));
      });

      it('replays more than one page without loading everything at once', async () => {
        const repo = h.repository();
        const rows: MessageRow[] = [];
        for (let i = 0; i < 450; i++) rows.push(await h.append(repoScope(repo.id), `bulk ${i}`, { publish: false }));
        const client = await open(roomEventsPath(repo.id), await h.token());
        await client.waitForMessages(450, 15_000);
        expect(seqs(client, h, rows)).to.deep.equal(rows.map((r) => r.seq));
      });

      it('resumes after Last-Event-ID or ?cursor= with no gap and no repeat', async () => {
        const repo = h.repository();
        const rows: MessageRow[] = [];
        for (let i = 0; i < 10; i++) rows.push(await h.append(repoScope(repo.id), `m${i}`));
        const token = await h.token('u_bob');
        const byHeader = await open(roomEventsPath(repo.id), token, { 'last-event-id': h.cursorOf(rows[3]!) });
        const byQuery = await open(`${roomEventsPath(repo.id)}?cursor=${h.cursorOf(rows[3]!)}`, token);
        for (const client of [byHeader, byQuery]) {
          await client.waitForMessages(6);
          await new Promise((r) => setTimeout(r, 100));
          expect(seqs(client, h, rows)).to.deep.equal([5, 6, 7, 8, 9, 10]);
        }
      });
    });

    describe('live delivery', () => {
      it('delivers concurrent appends once each, in order, after the replay', async () => {
        const repo = h.repository();
        const scope = repoScope(repo.id);
        const rows: MessageRow[] = [await h.append(scope, 'before')];
        const client = await open(roomEventsPath(repo.id), await h.token());
        const writers = Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; i < 15; i++) rows.push(await h.append(scope, `writer ${w} #${i}`));
        });
        await Promise.all(writers);
        await client.waitForMessages(61, 10_000);
        await new Promise((r) => setTimeout(r, 200));
        expect(seqs(client, h, rows)).to.deep.equal(Array.from({ length: 61 }, (_, i) => i + 1));
      });

      it('fills a gap from the store when the backbone drops an event', async () => {
        const repo = h.repository();
        const scope = repoScope(repo.id);
        const client = await open(roomEventsPath(repo.id), await h.token());
        const rows = [await h.append(scope, 'one'), await h.append(scope, 'two', { publish: false }), await h.append(scope, 'three')];
        await client.waitForMessages(3);
        expect(seqs(client, h, rows)).to.deep.equal([1, 2, 3]);
      });

      it('suppresses repeated and out-of-order events', async () => {
        const repo = h.repository();
        const scope = repoScope(repo.id);
        const client = await open(roomEventsPath(repo.id), await h.token());
        const rows = [];
        for (let i = 0; i < 3; i++) rows.push(await h.append(scope, `dup ${i}`, { publish: false }));
        for (const i of [0, 0, 2, 1, 1, 0, 2]) await h.publish(rows[i]!);
        await client.waitForMessages(3);
        await new Promise((r) => setTimeout(r, 200));
        expect(seqs(client, h, rows)).to.deep.equal([1, 2, 3]);
      });

      it('frames bodies with CR, LF, CRLF, NUL and U+2028 so an independent parser sees them byte-equal', async () => {
        const repo = h.repository();
        const bodies = ['a\rb', 'a\nb', 'a\r\nb', 'nul\0byte', 'ls\u2028ps\u2029end', '\n\ndata: forged\nid: 1\nevent: handoff\n\n', 'ünïcødé 🎉'];
        const client = await open(roomEventsPath(repo.id), await h.token());
        const rows = [];
        for (const body of bodies) rows.push(await h.append(repoScope(repo.id), body));
        await client.waitForMessages(bodies.length);
        await new Promise((r) => setTimeout(r, 200));
        expect(client.events.filter((e) => e.event !== 'heartbeat').map((e) => e.event)).to.deep.equal(bodies.map(() => 'message'));
        expect(client.messages().map((e) => JSON.parse(e.data).bodyMarkdown)).to.deep.equal(bodies);
        expect(client.messages().map((e) => e.id)).to.deep.equal(rows.map((r) => h.cursorOf(r)));
      });

      it('sends heartbeats without an id', async () => {
        const client = await open(roomEventsPath(h.repository().id), await h.token());
        await client.waitFor((c) => c.events.some((e) => e.event === 'heartbeat'), 3000, 'heartbeat');
        const beat = client.events.find((e) => e.event === 'heartbeat')!;
        expect(beat.id).to.equal(undefined);
        const data = JSON.parse(beat.data);
        expect(Object.keys(data)).to.deep.equal(['serverTime']);
        expect(Date.parse(data.serverTime)).to.be.closeTo(Date.now(), 5000);
      });
    });

    describe('authority over time', () => {
      it('sends reauthorize and closes when access is revoked', async () => {
        const repo = h.repository();
        const client = await open(roomEventsPath(repo.id), await h.token('u_bob'));
        h.setMembers(repo.id, { u_alice: 'write' });
        await client.waitForEnd(5000);
        const last = client.events.at(-1)!;
        expect(last.event).to.equal('reauthorize');
        expect(JSON.parse(last.data)).to.deep.equal({ reason: 'access_revoked' });
        expect(last.id).to.equal(undefined);
      });

      it("sends reauthorize at the next recheck once core revokes the stream's token; the same person's other token keeps streaming", async () => {
        const repo = h.repository();
        const [revoked, kept] = await Promise.all([h.token('u_bob'), h.token('u_bob')]);
        const client = await open(roomEventsPath(repo.id), revoked);
        const other = await open(roomEventsPath(repo.id), kept);
        expect([client.response.status, other.response.status]).to.deep.equal([200, 200]);
        const { jti } = JSON.parse(Buffer.from(revoked.split('.')[1]!, 'base64url').toString()) as { jti: string };
        const answer = await fetch(`${h.core.url}/dev/revocations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jti }) });
        expect(answer.status).to.equal(200);
        await client.waitForEnd(5000);
        const last = client.events.at(-1)!;
        expect(last.event).to.equal('reauthorize');
        expect(JSON.parse(last.data)).to.deep.equal({ reason: 'access_revoked' });
        // Several rechecks later the other stream is still open and delivering.
        await new Promise((r) => setTimeout(r, 1000));
        const row = await h.append(repoScope(repo.id), 'after the revocation');
        await other.waitForMessages(1);
        expect(other.messages().map((e) => e.id)).to.deep.equal([h.cursorOf(row)]);
        expect(other.ended).to.equal(false);
        const refused = await open(roomEventsPath(repo.id), revoked);
        expect(refused.response.status).to.equal(401);
        expect(refused.response.body.error.code).to.equal('TOKEN_REJECTED');
      });

      it('sends reauthorize and closes when core is unavailable, and resumes with nothing lost once core is back', async () => {
        const repo = h.repository();
        const token = await h.token();
        const before = [await h.append(repoScope(repo.id), 'before the outage')];
        const client = await open(roomEventsPath(repo.id), token);
        await client.waitForMessages(1);
        h.core.setFaults({ authorization: 'unavailable' });
        const during: Awaited<ReturnType<typeof h.append>>[] = [];
        try {
          await client.waitForEnd(5000);
          expect(JSON.parse(client.events.at(-1)!.data)).to.deep.equal({ reason: 'authorization_unavailable' });
          const refused = await open(roomEventsPath(repo.id), token);
          expect(refused.response.status).to.equal(503);
          expect(refused.response.body.error.code).to.equal('AUTHORIZATION_UNAVAILABLE');
          // Committed while the stream was down (by an API that had authorized them earlier).
          for (const body of ['during the outage 1', 'during the outage 2']) during.push(await h.append(repoScope(repo.id), body));
        } finally {
          h.core.setFaults({ authorization: 'ok' });
        }
        const lastId = client.messages().at(-1)!.id!;
        expect(lastId).to.equal(h.cursorOf(before[0]!));
        const resumed = await open(roomEventsPath(repo.id), token, { 'last-event-id': lastId });
        expect(resumed.response.status).to.equal(200);
        await resumed.waitForMessages(2);
        expect(resumed.messages().map((e) => e.id)).to.deep.equal(during.map((r) => h.cursorOf(r)));
        resumed.close();
      });

      it('closes before the token expires', async () => {
        const client = await open(roomEventsPath(h.repository().id), await h.token('u_alice', 7));
        const opened = Date.now();
        await client.waitForEnd(6000);
        expect(Date.now() - opened).to.be.below(4500);
        expect(client.events.at(-1)?.event).to.equal('reauthorize');
        expect(JSON.parse(client.events.at(-1)!.data)).to.deep.equal({ reason: 'token_expiring' });
      });
    });

    describe('after the suite', () => {
      it('forgets every closed stream', async () => {
        await new Promise((r) => setTimeout(r, 300));
        expect(h.gateway.hub.stats()).to.include({ sessions: 0, scopes: 0, ticking: false });
      });
    });
  });
}
