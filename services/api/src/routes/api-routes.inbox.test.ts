import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InProcessBackbone } from '@chat/backbone';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { createLogger } from '@chat/observability';
import { inboxKey, migrate, openDatabase, type Database, type InboxOwner } from '@chat/store';
import { AcknowledgeInboxResponseSchema, InboxPageResponseSchema } from '@chat/contracts';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { assembleProcessResources } from '@chat/process-resources';
import { createApiRuntime, type ApiRuntime } from '../runtime.ts';
import { inboxCursorBinding } from '../presenters/notification.presenter.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SERVICE_TOKEN = 'inbox-routes-test-service-token';

function fixture(repositoryId: string) {
  return {
    users: [{ id: 'u_alice' }, { id: 'u_bob' }, { id: 'u_carol' }],
    organizations: [{ id: 'o_acme' }],
    repositories: [{ id: repositoryId, state: 'active', branches: [], members: { u_alice: 'write', u_bob: 'read' } }],
    bots: [
      {
        id: 'b_ci',
        credentials: [{ id: 'c_1', state: 'active' }],
        grants: [{ id: 'g_1', repositoryId, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['room:read'], state: 'active' }],
      },
    ],
  };
}

describe('inbox routes over HTTP (PostgreSQL, dev-core)', function () {
  this.timeout(30_000);
  let database: Database;
  let core: DevCoreHandle;
  let api: ApiRuntime;
  let server: Server;
  let base: string;
  let repositoryId: string;
  const tokens: Record<string, string> = {};

  before(async () => {
    const logger = createLogger({ name: 'inbox-test', level: 'silent' });
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, fixture: fixture(ulid()), logger });
    database = await openDatabase({ kind: 'postgres', url: DATABASE_URL, poolSize: 30 });
    await migrate(database);
    const resources = await assembleProcessResources({
      database,
      backbone: new InProcessBackbone(),
      logger,
      core: { url: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 2000 },
      cursor: { secret: undefined, previousSecrets: [] },
    });
    api = createApiRuntime({ resources, logger, bodyLimitBytes: 262_144, rateLimit: { limit: 120, windowSeconds: 60, per: 'sender-room' } });
    server = createServer(api.listener).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const user of ['u_alice', 'u_bob', 'u_carol']) tokens[user] = await core.mintToken({ type: 'human', subjectId: user });
    tokens.b_ci = await core.mintToken({ type: 'bot', subjectId: 'b_ci' });
  });
  after(async () => {
    server.close();
    server.closeAllConnections();
    await database.close();
    await core.close();
  });
  beforeEach(() => {
    repositoryId = ulid();
    core.replaceFixture(fixture(repositoryId));
  });

  const owner = (principalId: string, principalKind: 'human' | 'bot' = 'human'): InboxOwner => ({ repositoryId, principalKind, principalId });

  /** Notifies `target` of `count` new messages, as the notifier would. */
  async function notify(target: InboxOwner, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      await api.deps.store.notifications.append(
        target,
        { messageId: ulid(), roomId: ulid(), branchId: null, senderKind: 'user', senderId: 'u_alice', spans: [{ startByte: 0, endByte: 4 }] },
        { now: new Date(), outboxPayload: () => '{}' },
      );
    }
  }

  async function call(method: string, path: string, as: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(as ? { authorization: `Bearer ${tokens[as]}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    expect(response.headers.get('x-request-id')).to.be.a('string');
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  const inbox = (query = '') => `/v1/repositories/${repositoryId}/inbox${query}`;
  const ack = (as: string, body: unknown) => call('POST', `/v1/repositories/${repositoryId}/inbox/acknowledgements`, as, body);

  describe('listRepositoryInbox', function () {
    it('answers an empty page for a principal never notified', async function () {
      const res = await call('GET', inbox(), 'u_bob');
      expect(res).to.deep.equal({ status: 200, body: { items: [], nextCursor: null, acknowledgedCursor: null } });
    });

    it('pages oldest first with item cursors, then flags acknowledged items', async function () {
      await notify(owner('u_bob'), 5);
      const first = await call('GET', inbox('?limit=2'), 'u_bob');
      expect(first.status).to.equal(200);
      expect(first.body.items).to.have.length(2);
      expect(first.body.items.every((n: any) => n.acknowledged === false && n.targetKind === 'human' && n.targetId === 'u_bob')).to.equal(true);
      expect(first.body.nextCursor).to.equal(first.body.items[1].cursor);
      const second = await call('GET', inbox(`?limit=2&cursor=${first.body.nextCursor}`), 'u_bob');
      const third = await call('GET', inbox(`?limit=2&cursor=${second.body.nextCursor}`), 'u_bob');
      expect(third.body.items).to.have.length(1);
      expect(third.body.nextCursor).to.equal(null);
      const all = [...first.body.items, ...second.body.items, ...third.body.items];
      const whole = await call('GET', inbox(), 'u_bob');
      expect(whole.body.items).to.deep.equal(all);
      expect(InboxPageResponseSchema.safeParse(whole.body).success).to.equal(true);
      expect(Object.keys(all[0]).sort()).to.deep.equal(
        ['acknowledged', 'branchId', 'createdAt', 'cursor', 'messageId', 'notificationId', 'repositoryId', 'roomId', 'senderId', 'senderKind', 'spans', 'targetId', 'targetKind'],
      );

      const acked = await ack('u_bob', { throughCursor: all[2].cursor, expectedCursor: null });
      expect(acked.status).to.equal(200);
      expect(AcknowledgeInboxResponseSchema.safeParse(acked.body).success).to.equal(true);
      const after = await call('GET', inbox(), 'u_bob');
      expect(after.body.items.map((n: any) => n.acknowledged)).to.deep.equal([true, true, true, false, false]);
      expect(after.body.acknowledgedCursor).to.equal(all[2].cursor);
    });

    it('keeps each principal to its own inbox, humans and bots alike', async function () {
      await notify(owner('u_bob'), 2);
      await notify(owner('b_ci', 'bot'), 3);
      expect((await call('GET', inbox(), 'u_alice')).body.items).to.have.length(0);
      const bot = await call('GET', inbox(), 'b_ci');
      expect(bot.body.items.map((n: any) => `${n.targetKind}:${n.targetId}`)).to.deep.equal(['bot:b_ci', 'bot:b_ci', 'bot:b_ci']);
    });

    it('refuses bad limits, foreign and forged cursors, and callers without access', async function () {
      await notify(owner('u_bob'), 2);
      await notify(owner('u_alice'), 2);
      const aliceCursor = (await call('GET', inbox(), 'u_alice')).body.items[0].cursor;
      for (const limit of ['0', '201', 'abc', '-1', '1.5']) expect((await call('GET', inbox(`?limit=${limit}`), 'u_bob')).body.error.code).to.equal('LIMIT_INVALID');
      expect((await call('GET', inbox(`?cursor=${aliceCursor}`), 'u_bob')).body.error.code).to.equal('CURSOR_INVALID');
      expect((await call('GET', inbox('?cursor=not-a-cursor'), 'u_bob')).body.error.code).to.equal('CURSOR_INVALID');
      const otherRepoCursor = api.deps.cursors.encode(inboxCursorBinding({ ...owner('u_bob'), repositoryId: ulid() }), 1);
      expect((await call('GET', inbox(`?cursor=${otherRepoCursor}`), 'u_bob')).status).to.equal(400);
      const roomCursor = api.deps.cursors.encode({ kind: 'room', roomId: ulid() }, 1);
      expect((await call('GET', inbox(`?cursor=${roomCursor}`), 'u_bob')).body.error.code).to.equal('CURSOR_INVALID');
      expect((await call('GET', inbox(), 'u_carol')).status).to.equal(403);
      expect((await call('GET', inbox(), null)).status).to.equal(401);
      expect((await call('GET', '/v1/repositories/not-a-ulid/inbox', 'u_bob')).body.error.code).to.equal('SCOPE_INVALID');
      expect((await call('DELETE', inbox(), 'u_bob')).status).to.equal(405);
    });
  });

  describe('acknowledgeRepositoryInbox', function () {
    async function cursors(principal: string): Promise<string[]> {
      return (await call('GET', inbox(), principal)).body.items.map((n: any) => n.cursor);
    }

    it('moves the checkpoint forward and answers a cursor at or behind it as a replay', async function () {
      await notify(owner('u_bob'), 4);
      const c = await cursors('u_bob');
      expect(await ack('u_bob', { throughCursor: c[1], expectedCursor: null })).to.deep.equal({ status: 200, body: { acknowledgedCursor: c[1], replayed: false } });
      expect(await ack('u_bob', { throughCursor: c[1] })).to.deep.equal({ status: 200, body: { acknowledgedCursor: c[1], replayed: true } });
      expect(await ack('u_bob', { throughCursor: c[0] })).to.deep.equal({ status: 200, body: { acknowledgedCursor: c[1], replayed: true } });
      expect(await ack('u_bob', { throughCursor: c[0], expectedCursor: c[1] })).to.deep.equal({ status: 200, body: { acknowledgedCursor: c[1], replayed: true } });
      expect(await ack('u_bob', { throughCursor: c[3], expectedCursor: c[1] })).to.deep.equal({ status: 200, body: { acknowledgedCursor: c[3], replayed: false } });
      expect((await call('GET', inbox(), 'u_bob')).body.acknowledgedCursor).to.equal(c[3]);
    });

    it('refuses a stale expected checkpoint, null included once a checkpoint exists', async function () {
      await notify(owner('u_bob'), 3);
      const c = await cursors('u_bob');
      expect((await ack('u_bob', { throughCursor: c[1], expectedCursor: c[0] })).status).to.equal(409);
      await ack('u_bob', { throughCursor: c[0], expectedCursor: null });
      const stale = await ack('u_bob', { throughCursor: c[2], expectedCursor: null });
      expect(stale.status).to.equal(409);
      expect(stale.body.error.code).to.equal('INBOX_CHECKPOINT_STALE');
      expect((await ack('u_bob', { throughCursor: c[2], expectedCursor: c[1] })).body.error.code).to.equal('INBOX_CHECKPOINT_STALE');
      expect((await call('GET', inbox(), 'u_bob')).body.acknowledgedCursor).to.equal(c[0]);
    });

    it('refuses cursors of another inbox with 400 and unknown notifications with 404', async function () {
      await notify(owner('u_bob'), 2);
      await notify(owner('u_alice'), 2);
      const alice = await cursors('u_alice');
      const bob = await cursors('u_bob');
      expect((await ack('u_bob', { throughCursor: alice[0] })).body.error.code).to.equal('CURSOR_INVALID');
      expect((await ack('u_bob', { throughCursor: bob[0], expectedCursor: alice[0] })).body.error.code).to.equal('CURSOR_INVALID');
      const beyond = api.deps.cursors.encode(inboxCursorBinding(owner('u_bob')), 99);
      const missing = await ack('u_bob', { throughCursor: beyond });
      expect(missing.status).to.equal(404);
      expect(missing.body.error.code).to.equal('RESOURCE_NOT_FOUND');
      // A principal with no inbox at all: its MAC-valid cursor names nothing.
      const carolless = api.deps.cursors.encode(inboxCursorBinding(owner('b_ci', 'bot')), 1);
      expect((await ack('b_ci', { throughCursor: carolless })).status).to.equal(404);
      expect((await ack('u_carol', { throughCursor: bob[0] })).status).to.equal(403);
    });

    it('refuses malformed bodies with REQUEST_INVALID', async function () {
      await notify(owner('u_bob'), 1);
      const [c] = await cursors('u_bob');
      for (const body of [{}, { throughCursor: c, extra: 1 }, { throughCursor: 5 }, { throughCursor: c, expectedCursor: 7 }, [c], '{"throughCursor":']) {
        const res = await ack('u_bob', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('REQUEST_INVALID');
      }
      const plain = await call('POST', `/v1/repositories/${repositoryId}/inbox/acknowledgements`, 'u_bob', JSON.stringify({ throughCursor: c }), { 'content-type': 'text/plain' });
      expect(plain.body.error.code).to.equal('REQUEST_INVALID');
    });

    it('lets exactly one of 20 racing acknowledgements with one expected checkpoint win', async function () {
      await notify(owner('u_bob'), 25);
      const c = await cursors('u_bob');
      await ack('u_bob', { throughCursor: c[0], expectedCursor: null });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ack('u_bob', { throughCursor: c[1 + (i % 20)], expectedCursor: c[0] })));
      const won = results.filter((r) => r.status === 200);
      expect(won).to.have.length(1);
      expect(won[0]!.body.replayed).to.equal(false);
      expect(results.filter((r) => r.status === 409 && r.body.error.code === 'INBOX_CHECKPOINT_STALE')).to.have.length(19);
      expect((await call('GET', inbox(), 'u_bob')).body.acknowledgedCursor).to.equal(won[0]!.body.acknowledgedCursor);
      const inboxRow = await api.deps.store.inboxes.findByKey(inboxKey(owner('u_bob')));
      expect(c.indexOf(won[0]!.body.acknowledgedCursor) + 1).to.equal(inboxRow!.ackSeq);
    });

    it('lets exactly one of 20 identical racing acknowledgements win', async function () {
      await notify(owner('u_bob'), 3);
      const c = await cursors('u_bob');
      const results = await Promise.all(Array.from({ length: 20 }, () => ack('u_bob', { throughCursor: c[2], expectedCursor: null })));
      expect(results.filter((r) => r.status === 200 && r.body.replayed === false)).to.have.length(1);
      expect(results.filter((r) => r.status === 409)).to.have.length(19);
    });
  });
});
