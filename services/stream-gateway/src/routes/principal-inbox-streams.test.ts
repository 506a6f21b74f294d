import { expect } from 'chai';
import type { FeedPrincipal } from '@chat/store';
import { principalInboxContractProblems } from '../../test/feed-contract.ts';
import { expectedFeedNotification, feedCursorOf, notifyFeed, PRINCIPAL_INBOX_PATH, publishFeedEntry, type FedNotification } from '../../test/feed-fixture.ts';
import { GatewayHarness, TARGETS } from '../../test/gateway-harness.ts';
import { acknowledge, bot, human, inboxCursorOf, inboxEventsPath } from '../../test/inbox-fixture.ts';
import { openSse, type SseClient } from '../../test/sse-client.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const notifications = (client: SseClient) => client.events.filter((e) => e.event === 'notification');
const waitForNotifications = (client: SseClient, count: number, timeoutMs = 5000) =>
  client.waitFor((c) => notifications(c).length >= count, timeoutMs, `${count} notifications`);
const humanFeed = (principalId: string): FeedPrincipal => ({ principalKind: 'human', principalId });
const botFeed = (principalId: string): FeedPrincipal => ({ principalKind: 'bot', principalId });

/** More repositories than the per-principal stream caps' defaults (64): one feed stream follows them all. */
const MANY_REPOSITORIES = 70;

for (const target of TARGETS) {
  describe(`principal inbox stream (${target})`, function () {
    this.timeout(60_000);
    const INBOX_CAP = 2;
    const h = new GatewayHarness({
      target,
      repositories: MANY_REPOSITORIES + 20,
      engine: { heartbeatMs: 300, recheckMs: 300, tickMs: 50 },
      caps: { inboxPrincipalCap: INBOX_CAP },
    });
    const clients: Array<SseClient & { path: string }> = [];
    const open = async (path: string, token: string | undefined, headers: Record<string, string> = {}) => {
      const client = Object.assign(await openSse(h.url, path, token, headers), { path });
      clients.push(client);
      return client;
    };
    /** The feed seqs of the notification events a stream got, by their SSE ids. */
    const feedSeqsOf = (client: SseClient, principal: FeedPrincipal, fed: FedNotification[]) => {
      const bySeq = new Map(fed.map((f) => [feedCursorOf(h, principal, f.feedSeq), f.feedSeq]));
      return notifications(client).map((e) => bySeq.get(e.id ?? '') ?? -1);
    };
    /** A fresh user reading `count` fresh repositories. */
    const reader = async (count: number) => {
      const repositories = Array.from({ length: count }, () => h.repository().id);
      const id = h.addUser(repositories);
      return { id, repositories, feed: humanFeed(id), owner: (i: number) => human(repositories[i]!, id), token: await h.token(id) };
    };

    before(() => h.start());
    after(() => h.stop());
    afterEach(() => {
      const opened = clients.splice(0);
      for (const c of opened) c.close();
      // Every answer of the operation, refusals and events alike, as the OpenAPI document describes it.
      const problems = opened.filter((c) => c.path.startsWith(PRINCIPAL_INBOX_PATH)).flatMap((c) => principalInboxContractProblems(c));
      expect(problems).to.deep.equal([]);
    });

    it('checks answers against the OpenAPI document (the check can fail)', () => {
      const fake = (response: SseClient['response'], events: SseClient['events'] = []) => ({ response, events }) as unknown as SseClient;
      expect(principalInboxContractProblems(fake({ status: 409, headers: {} }))).to.have.length(1);
      expect(principalInboxContractProblems(fake({ status: 400, headers: {}, body: { code: 'CURSOR_INVALID' } }))).to.have.length(1);
      const events = [
        { event: 'notification', id: undefined, data: '{"notificationId":"x"}' },
        { event: 'heartbeat', id: 'c1', data: '{"serverTime":"2026-01-01T00:00:00.000Z"}' },
        { event: 'message', id: 'c2', data: '{}' },
      ] as SseClient['events'];
      expect(principalInboxContractProblems(fake({ status: 200, headers: {} }, events))).to.have.length(4);
    });

    describe('refusals before the stream opens', () => {
      it('answers 401 without or with a bad token, in the envelope', async () => {
        const none = await open(PRINCIPAL_INBOX_PATH, undefined, { 'x-request-id': 'feed-401' });
        expect(none.response.status).to.equal(401);
        expect(none.response.body.error).to.include({ code: 'AUTHENTICATION_REQUIRED', requestId: 'feed-401' });
        const bad = await open(PRINCIPAL_INBOX_PATH, 'a.b.c');
        expect(bad.response.status).to.equal(401);
        expect(bad.response.body.error.code).to.equal('TOKEN_REJECTED');
      });

      it('refuses a non-stream Accept, conflicting resume inputs, and forged or foreign cursors with 400', async () => {
        const alice = await reader(2);
        const [first, second] = [await notifyFeed(h, alice.owner(0)), await notifyFeed(h, alice.owner(1))];
        const json = await open(PRINCIPAL_INBOX_PATH, alice.token, { accept: 'application/json' });
        expect(json.response.status).to.equal(400);
        expect(json.response.body.error.code).to.equal('REQUEST_INVALID');
        const [c1, c2] = [feedCursorOf(h, alice.feed, first.feedSeq), feedCursorOf(h, alice.feed, second.feedSeq)];
        const conflict = await open(`${PRINCIPAL_INBOX_PATH}?cursor=${c1}`, alice.token, { 'last-event-id': c2 });
        expect(conflict.response.status).to.equal(400);
        expect(conflict.response.body.error.code).to.equal('CURSOR_CONFLICT');
        const foreign = {
          forged: 'forged',
          "another principal's feed": feedCursorOf(h, humanFeed('u_bob'), 1),
          "a bot's feed of the same id": feedCursorOf(h, botFeed(alice.id), 1),
          "the caller's inbox in one of its repositories": inboxCursorOf(h, alice.owner(0), 1),
        };
        for (const [what, cursor] of Object.entries(foreign)) {
          const byHeader = { path: PRINCIPAL_INBOX_PATH, headers: { 'last-event-id': cursor } };
          const byQuery = { path: `${PRINCIPAL_INBOX_PATH}?cursor=${encodeURIComponent(cursor)}`, headers: {} };
          for (const { path, headers } of [byHeader, byQuery]) {
            const refused = await open(path, alice.token, headers);
            expect(refused.response.status, what).to.equal(400);
            expect(refused.response.body.error.code, what).to.equal('CURSOR_INVALID');
          }
        }
      });

      it('answers 405 for other methods', async () => {
        const response = await fetch(`${h.url}${PRINCIPAL_INBOX_PATH}`, { method: 'POST' });
        expect(response.status).to.equal(405);
      });
    });

    describe('one stream across repositories', () => {
      it('delivers the notifications of several repositories in feed order, each with its own inbox cursor and checkpoint, replayed and then live', async () => {
        const alice = await reader(3);
        const fed: FedNotification[] = [];
        // Before opening: some published, some not (the replay reads the store either way).
        for (const [i, repository] of [0, 1, 0, 2, 1].entries()) fed.push(await notifyFeed(h, alice.owner(repository), { publish: i % 2 === 0 }));
        await acknowledge(h, alice.owner(0), 0, 1);
        const client = await open(PRINCIPAL_INBOX_PATH, alice.token, { 'x-request-id': 'feed-open' });
        expect(client.response.status).to.equal(200);
        expect(client.response.headers['content-type']).to.match(/^text\/event-stream/);
        expect(client.response.headers['x-request-id']).to.equal('feed-open');
        for (const repository of [2, 0, 1, 2]) fed.push(await notifyFeed(h, alice.owner(repository)));
        await waitForNotifications(client, fed.length);
        await sleep(200);
        expect(feedSeqsOf(client, alice.feed, fed)).to.deep.equal(fed.map((f) => f.feedSeq));
        expect(fed.map((f) => f.feedSeq)).to.deep.equal(Array.from({ length: fed.length }, (_, i) => i + 1));
        const ackOf = (f: FedNotification) => (f.owner.repositoryId === alice.repositories[0] ? 1 : 0);
        expect(notifications(client).map((e) => JSON.parse(e.data))).to.deep.equal(fed.map((f) => expectedFeedNotification(h, f, ackOf(f))));
        expect(notifications(client).map((e) => JSON.parse(e.data).acknowledged)).to.deep.equal([true, false, false, false, false, false, false, false, false]);
      });

      it('hands each notification with its message when asked (include=message), replayed and live, and refuses another include', async () => {
        const alice = await reader(2);
        const say = (i: number, body: string) => h.append({ repositoryId: alice.repositories[i]!, branchId: null }, body);
        const fed = [await notifyFeed(h, alice.owner(0), { message: await say(0, 'before the stream'), publish: false })];
        const client = await open(`${PRINCIPAL_INBOX_PATH}?include=message`, alice.token);
        expect(client.response.status).to.equal(200);
        fed.push(await notifyFeed(h, alice.owner(1), { message: await say(1, 'while it is open') }));
        // An entry written without its message (as an older notifier did) is still sent, without one.
        fed.push(await notifyFeed(h, alice.owner(0)));
        await waitForNotifications(client, fed.length);
        const events = notifications(client).map((e) => JSON.parse(e.data) as { message?: { messageId: string; bodyMarkdown: string } });
        expect(events.map((e) => e.message?.bodyMarkdown)).to.deep.equal(['before the stream', 'while it is open', undefined]);
        expect(events.map((e) => e.message?.messageId)).to.deep.equal([fed[0]!.row.messageId, fed[1]!.row.messageId, undefined]);
        const { message: _handed, ...notification } = events[1]!;
        expect(notification).to.deep.equal(expectedFeedNotification(h, fed[1]!, 0));
        // Without include, the same stream's events carry no message.
        const plain = await open(PRINCIPAL_INBOX_PATH, alice.token);
        await waitForNotifications(plain, fed.length);
        expect(notifications(plain).every((e) => !('message' in JSON.parse(e.data)))).to.equal(true);
        const bad = await open(`${PRINCIPAL_INBOX_PATH}?include=body`, alice.token);
        expect(bad.response.status).to.equal(400);
        expect(bad.response.body.error.code).to.equal('REQUEST_INVALID');
      });

      it('fills a gap of live feed entries from the store and drops repeats', async () => {
        const alice = await reader(2);
        const client = await open(PRINCIPAL_INBOX_PATH, alice.token);
        const fed = [await notifyFeed(h, alice.owner(0)), await notifyFeed(h, alice.owner(1), { publish: false }), await notifyFeed(h, alice.owner(0), { publish: false })];
        for (const i of [2, 0, 2, 0]) await publishFeedEntry(h, fed[i]!);
        await waitForNotifications(client, 3);
        await sleep(200);
        expect(feedSeqsOf(client, alice.feed, fed)).to.deep.equal([1, 2, 3]);
        expect(notifications(client).map((e) => JSON.parse(e.data))).to.deep.equal(fed.map((f) => expectedFeedNotification(h, f, 0)));
      });

      it('resumes after Last-Event-ID or ?cursor= with exactly the rest, across repositories', async () => {
        const alice = await reader(2);
        const fed: FedNotification[] = [];
        for (let i = 0; i < 6; i++) fed.push(await notifyFeed(h, alice.owner(i % 2)));
        const cursor = feedCursorOf(h, alice.feed, 2);
        const resumed = [await open(PRINCIPAL_INBOX_PATH, alice.token, { 'last-event-id': cursor }), await open(`${PRINCIPAL_INBOX_PATH}?cursor=${cursor}`, alice.token)];
        fed.push(await notifyFeed(h, alice.owner(1)));
        for (const client of resumed) {
          await waitForNotifications(client, 5);
          await sleep(100);
          expect(feedSeqsOf(client, alice.feed, fed)).to.deep.equal([3, 4, 5, 6, 7]);
        }
      });

      it('starts after the acknowledged feed checkpoint without a cursor', async () => {
        const alice = await reader(2);
        const fed: FedNotification[] = [];
        for (let i = 0; i < 5; i++) fed.push(await notifyFeed(h, alice.owner(i % 2)));
        await h.gateway.deps.store.principalFeeds.acknowledge(alice.feed, { throughSeq: 3 });
        const client = await open(PRINCIPAL_INBOX_PATH, alice.token);
        fed.push(await notifyFeed(h, alice.owner(0)));
        await waitForNotifications(client, 3);
        await sleep(100);
        expect(feedSeqsOf(client, alice.feed, fed)).to.deep.equal([4, 5, 6]);
        expect(notifications(client).map((e) => JSON.parse(e.data).acknowledged)).to.deep.equal([false, false, false]);
        // A principal never notified streams nothing until its first notification.
        const fresh = await reader(1);
        const empty = await open(PRINCIPAL_INBOX_PATH, fresh.token);
        expect(empty.response.status).to.equal(200);
        const first = await notifyFeed(h, fresh.owner(0));
        await waitForNotifications(empty, 1);
        expect(notifications(empty).map((e) => e.id)).to.deep.equal([feedCursorOf(h, fresh.feed, first.feedSeq)]);
      });

      it(`follows a bot's ${MANY_REPOSITORIES} repositories on one stream (one inbox-stream slot), and never a human's feed of the same id`, async () => {
        const repositories = Array.from({ length: MANY_REPOSITORIES }, () => h.repository().id);
        const botId = h.addBot(repositories);
        const token = await h.tokenOfBot(botId);
        await notifyFeed(h, human(repositories[0]!, botId));
        const client = await open(PRINCIPAL_INBOX_PATH, token);
        const fed: FedNotification[] = [];
        for (const [i, repositoryId] of repositories.entries()) fed.push(await notifyFeed(h, bot(repositoryId, botId), { publish: i % 3 !== 1 }));
        // The unpublished ones are read from the store as gaps before later entries (the last is published).
        await waitForNotifications(client, MANY_REPOSITORIES, 20_000);
        await sleep(200);
        expect(feedSeqsOf(client, botFeed(botId), fed)).to.deep.equal(fed.map((f) => f.feedSeq));
        const data = notifications(client).map((e) => JSON.parse(e.data));
        expect(new Set(data.map((d) => d.repositoryId)).size).to.equal(MANY_REPOSITORIES);
        expect(new Set(data.map((d) => `${d.targetKind}:${d.targetId}`))).to.deep.equal(new Set([`bot:${botId}`]));
      });
    });

    describe('authority over time', () => {
      /**
       * Notifies repository `probe` and then `witness` until the stream gets the witness without the
       * probe (the recheck took the probe's repository away) or with it (it gave it back); returns
       * the entries written.
       */
      const untilProbe = async (client: SseClient, notify: (repository: number) => Promise<FedNotification>, probe: number, witness: number, delivered: boolean) => {
        const fed: FedNotification[] = [];
        for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
          const [p, w] = [await notify(probe), await notify(witness)];
          fed.push(p, w);
          await client.waitFor((c) => notifications(c).some((e) => JSON.parse(e.data).notificationId === w.row.notificationId), 5000, 'the witness');
          if (notifications(client).some((e) => JSON.parse(e.data).notificationId === p.row.notificationId) === delivered) return fed;
          await sleep(100);
        }
        throw new Error(`the probe's repository was not ${delivered ? 'given back' : 'taken away'}`);
      };
      const idsOf = (client: SseClient) => notifications(client).map((e) => JSON.parse(e.data).notificationId as string);

      it("stops a repository whose read access was revoked at the next recheck, goes on with the others', and starts one that becomes readable again", async () => {
        const alice = await reader(2);
        const client = await open(PRINCIPAL_INBOX_PATH, alice.token);
        const notify = (repository: number) => notifyFeed(h, alice.owner(repository));
        const before = [await notify(0), await notify(1)];
        await waitForNotifications(client, 2);

        h.setReader(alice.id, alice.repositories[0]!, false);
        const probing = await untilProbe(client, notify, 0, 1, false);
        const taken = probing.at(-2)!;
        const after = [await notify(0), await notify(1), await notify(0), await notify(1)];
        await client.waitFor((c) => idsOf(c).includes(after[3]!.row.notificationId), 5000, 'the last witness');
        const seen = new Set(idsOf(client));
        // From the first probe passed over on: nothing of the revoked repository, everything of the other.
        const fromThen = [...probing.slice(probing.indexOf(taken)), ...after];
        expect(fromThen.filter((f) => seen.has(f.row.notificationId)).map((f) => f.owner.repositoryId)).to.deep.equal(fromThen.filter((f) => f.owner.repositoryId === alice.repositories[1]).map((f) => f.owner.repositoryId));
        expect(before.every((f) => seen.has(f.row.notificationId))).to.equal(true);
        // Positions only move forward: what was sent is in feed order with no repeat.
        const sentSeqs = feedSeqsOf(client, alice.feed, [...before, ...probing, ...after]);
        expect(sentSeqs).to.deep.equal([...new Set(sentSeqs)].sort((a, b) => a - b));

        h.setReader(alice.id, alice.repositories[0]!, true);
        await untilProbe(client, notify, 0, 1, true);
        expect(client.ended).to.equal(false);
      });

      it("stops a bot's repository whose grant was revoked, and closes with reauthorize when its credential is revoked", async () => {
        const repositories = [h.repository().id, h.repository().id];
        const botId = h.addBot(repositories);
        const client = await open(PRINCIPAL_INBOX_PATH, await h.tokenOfBot(botId));
        const notify = (repository: number) => notifyFeed(h, bot(repositories[repository]!, botId));
        h.setBotState(botId, { repositoryId: repositories[0]!, grant: 'revoked' });
        await untilProbe(client, notify, 0, 1, false);

        h.setBotState(botId, { credential: 'revoked' });
        await client.waitForEnd(5000);
        const last = client.events.at(-1)!;
        expect(last.event).to.equal('reauthorize');
        expect(JSON.parse(last.data)).to.deep.equal({ reason: 'access_revoked' });
        expect(last.id).to.equal(undefined);
      });

      it('answers 503 AUTHORIZATION_UNAVAILABLE when core is down, and sends reauthorize to open streams', async () => {
        const alice = await reader(1);
        const client = await open(PRINCIPAL_INBOX_PATH, alice.token);
        h.core.setFaults({ authorization: 'unavailable' });
        try {
          await client.waitForEnd(5000);
          expect(JSON.parse(client.events.at(-1)!.data)).to.deep.equal({ reason: 'authorization_unavailable' });
          const refused = await open(PRINCIPAL_INBOX_PATH, alice.token);
          expect(refused.response.status).to.equal(503);
          expect(refused.response.body.error.code).to.equal('AUTHORIZATION_UNAVAILABLE');
        } finally {
          h.core.setFaults({ authorization: 'ok' });
        }
      });
    });

    describe('the per-principal inbox stream cap', () => {
      it('counts a principal inbox stream as one inbox stream, beside the per-repository ones, and frees its slot on close', async () => {
        const carol = await reader(1);
        const held = [await open(PRINCIPAL_INBOX_PATH, carol.token), await open(inboxEventsPath(carol.repositories[0]!), carol.token)];
        expect(held.map((c) => c.response.status)).to.deep.equal(Array(INBOX_CAP).fill(200));
        const refused = await open(PRINCIPAL_INBOX_PATH, carol.token, { 'x-request-id': 'feed-cap' });
        expect(refused.response.status).to.equal(503);
        expect(refused.response.body.error).to.include({ code: 'STREAM_UNAVAILABLE', requestId: 'feed-cap' });
        expect(String(refused.response.headers['retry-after'])).to.match(/^[1-9][0-9]*$/);
        held[0]!.close();
        let reopened: SseClient | undefined;
        for (const deadline = Date.now() + 5000; !reopened && Date.now() < deadline; ) {
          const attempt = await open(PRINCIPAL_INBOX_PATH, carol.token);
          if (attempt.response.status === 200) reopened = attempt;
          else await sleep(50);
        }
        expect(reopened, 'a freed slot').not.to.equal(undefined);
      });
    });

    describe('after the suite', () => {
      it('forgets every closed stream', async () => {
        for (const c of clients.splice(0)) c.close();
        for (const deadline = Date.now() + 5000; h.gateway.hub.stats().sessions > 0 && Date.now() < deadline; ) await sleep(50);
        expect(h.gateway.hub.stats()).to.include({ sessions: 0, scopes: 0, ticking: false });
      });
    });
  });
}
