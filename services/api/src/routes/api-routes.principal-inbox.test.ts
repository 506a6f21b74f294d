import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InProcessBackbone } from '@chat/backbone';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { createLogger } from '@chat/observability';
import { inboxKey, migrate, openDatabase, type Database, type InboxOwner } from '@chat/store';
import { AcknowledgeInboxResponseSchema, ErrorEnvelopeSchema, InboxPageResponseSchema, openApiDocument } from '@chat/contracts';
import { feedCursorBinding, inboxCursorBinding } from '@chat/wire-format';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { assembleProcessResources } from '@chat/process-resources';
import { createApiRuntime, type ApiRuntime } from '../runtime.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SERVICE_TOKEN = 'principal-inbox-routes-test-service-token';

/** The component schemas the feed operations answer with, by the name the OpenAPI document gives them. */
const SCHEMAS = { InboxPageResponse: InboxPageResponseSchema, AcknowledgeInboxResponse: AcknowledgeInboxResponseSchema, ErrorEnvelope: ErrorEnvelopeSchema };

type Json = Record<string, any>;

/** Checks an answer against the OpenAPI document: a status the operation lists, a body of the schema it names. */
function expectDocumented(method: string, template: string, answer: { status: number; body: unknown }): void {
  const operation = (openApiDocument.paths as Json)[template][method.toLowerCase()] as Json;
  let response = operation.responses[String(answer.status)] as Json | undefined;
  expect(response, `${operation.operationId} lists ${answer.status}`).to.not.equal(undefined);
  if (typeof response!.$ref === 'string') response = (openApiDocument.components as Json).responses[response!.$ref.split('/').at(-1)!];
  const ref = response!.content['application/json'].schema.$ref as string;
  const schema = SCHEMAS[ref.split('/').at(-1) as keyof typeof SCHEMAS];
  const parsed = schema.safeParse(answer.body);
  expect(parsed.success, `${operation.operationId} ${answer.status}: ${JSON.stringify(answer.body)}`).to.equal(true);
}

/** The principals of one test: fresh IDs, so their feeds hold only that test's notifications. */
interface Names {
  bot: string;
  bob: string;
  carol: string;
}

function fixture(repositories: { r1: string; r2: string; r3: string }, names: Names, options: { grantOnR2?: string; credential?: string } = {}) {
  const grant = (id: string, repositoryId: string, state = 'active') => ({
    id,
    repositoryId,
    subject: { kind: 'organization', id: 'o_acme' },
    capabilities: ['room:read'],
    state,
  });
  return {
    users: [{ id: 'u_alice' }, { id: names.bob }, { id: names.carol }],
    organizations: [{ id: 'o_acme' }],
    repositories: [
      { id: repositories.r1, state: 'active', branches: [], members: { u_alice: 'write', [names.bob]: 'read' } },
      { id: repositories.r2, state: 'active', branches: [], members: { u_alice: 'write', [names.bob]: 'read' } },
      // Nobody of the test may read R3.
      { id: repositories.r3, state: 'active', branches: [], members: { u_alice: 'write' } },
    ],
    bots: [
      {
        id: names.bot,
        credentials: [{ id: `c_${names.bot}`, state: options.credential ?? 'active' }],
        grants: [grant(`g1_${names.bot}`, repositories.r1), grant(`g2_${names.bot}`, repositories.r2, options.grantOnR2)],
      },
    ],
  };
}

describe('principal inbox routes over HTTP (PostgreSQL, dev-core)', function () {
  this.timeout(30_000);
  let database: Database;
  let core: DevCoreHandle;
  let api: ApiRuntime;
  let server: Server;
  let base: string;
  let repos: { r1: string; r2: string; r3: string };
  let names: Names;
  /** Tokens by role: `bot`, `bob`, `carol`. */
  const tokens: Record<string, string> = {};

  before(async () => {
    const logger = createLogger({ name: 'principal-inbox-test', level: 'silent' });
    repos = { r1: ulid(), r2: ulid(), r3: ulid() };
    names = { bot: 'b_ci', bob: 'u_bob', carol: 'u_carol' };
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, fixture: fixture(repos, names), logger });
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
  });
  after(async () => {
    server.close();
    server.closeAllConnections();
    await database.close();
    await core.close();
  });
  beforeEach(async () => {
    repos = { r1: ulid(), r2: ulid(), r3: ulid() };
    const suffix = ulid().toLowerCase();
    names = { bot: `b_ci${suffix}`, bob: `u_bob${suffix}`, carol: `u_carol${suffix}` };
    core.replaceFixture(fixture(repos, names));
    core.setFaults({ authorization: 'ok' });
    tokens.bob = await core.mintToken({ type: 'human', subjectId: names.bob });
    tokens.carol = await core.mintToken({ type: 'human', subjectId: names.carol });
    tokens.bot = await core.mintToken({ type: 'bot', subjectId: names.bot });
  });
  afterEach(() => {
    core.setFaults({ authorization: 'ok' });
  });

  const owner = (repositoryId: string, principalId = names.bot, principalKind: 'human' | 'bot' = 'bot'): InboxOwner => ({ repositoryId, principalKind, principalId });

  /** Notifies each target in turn of a new message, as the notifier would. */
  async function notify(...targets: InboxOwner[]): Promise<void> {
    for (const target of targets) {
      await api.deps.store.notifications.append(
        target,
        { messageId: ulid(), roomId: ulid(), branchId: null, senderKind: 'user', senderId: 'u_alice', spans: [{ startByte: 0, endByte: 4 }] },
        { now: new Date(), outboxPayload: () => '{}' },
      );
    }
  }

  async function call(method: string, path: string, as: string | null, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...(as ? { authorization: `Bearer ${tokens[as]}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    expect(response.headers.get('x-request-id')).to.be.a('string');
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  /** GET /v1/inbox, checked against the OpenAPI document. */
  async function list(as: string | null, query = ''): Promise<{ status: number; body: any }> {
    const answer = await call('GET', `/v1/inbox${query}`, as);
    expectDocumented('GET', '/v1/inbox', answer);
    return answer;
  }

  /** POST /v1/inbox/acknowledgements, checked against the OpenAPI document. */
  async function ack(as: string | null, body: unknown): Promise<{ status: number; body: any }> {
    const answer = await call('POST', '/v1/inbox/acknowledgements', as, body);
    expectDocumented('POST', '/v1/inbox/acknowledgements', answer);
    return answer;
  }

  /** Every page of the caller's feed, following nextCursor with `limit`. */
  async function walk(as: string, limit: number): Promise<{ items: any[]; pages: any[] }> {
    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(as, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).to.equal(200);
      pages.push(res.body);
      cursor = res.body.nextCursor;
    } while (cursor !== null && pages.length < 50);
    return { items: pages.flatMap((p) => p.items), pages };
  }

  const repositoryOrder = (items: any[]) => items.map((n) => n.repositoryId);
  const feedCursor = (seq: number, principalId = names.bot, principalKind: 'human' | 'bot' = 'bot') =>
    api.deps.cursors.encode(feedCursorBinding({ principalKind, principalId }), seq);

  describe('listPrincipalInbox', function () {
    it('answers an empty page for a principal never notified', async function () {
      expect(await list('carol')).to.deep.equal({ status: 200, body: { items: [], nextCursor: null, acknowledgedCursor: null } });
    });

    it('pages the caller\'s notifications across its repositories in feed order, each with its own inbox cursor', async function () {
      await notify(owner(repos.r1), owner(repos.r2), owner(repos.r1), owner(repos.r2), owner(repos.r1));
      await notify(owner(repos.r1, names.bob, 'human'));
      const { items, pages } = await walk('bot', 2);
      expect(repositoryOrder(items)).to.deep.equal([repos.r1, repos.r2, repos.r1, repos.r2, repos.r1]);
      expect(items.every((n) => n.targetKind === 'bot' && n.targetId === names.bot && n.acknowledged === false)).to.equal(true);
      // Pages of 2, 2, 1, then an empty one that ends the walk.
      expect(pages.map((p) => p.items.length)).to.deep.equal([2, 2, 1, 0]);
      // nextCursor is a feed cursor, not an item's inbox cursor.
      expect(pages[0].nextCursor).to.equal(feedCursor(2));
      expect(items[0].cursor).to.equal(api.deps.cursors.encode(inboxCursorBinding(owner(repos.r1)), 1));
      expect(items[3].cursor).to.equal(api.deps.cursors.encode(inboxCursorBinding(owner(repos.r2)), 2));
      expect((await list('bot')).body.items).to.deep.equal(items);
      // An item's cursor works on its repository's inbox.
      const perRepository = await call('POST', `/v1/repositories/${repos.r2}/inbox/acknowledgements`, 'bot', { throughCursor: items[1].cursor });
      expect(perRepository).to.deep.equal({ status: 200, body: { acknowledgedCursor: items[1].cursor, replayed: false } });
      const after = (await list('bot')).body;
      expect(after.items.map((n: any) => n.acknowledged)).to.deep.equal([false, true, false, false, false]);
      // ... and does not move the feed's checkpoint.
      expect(after.acknowledgedCursor).to.equal(null);
      // A human's feed holds its own notifications only.
      expect(repositoryOrder((await list('bob')).body.items)).to.deep.equal([repos.r1]);
    });

    it('leaves out repositories the caller may not read now, and moves on past them', async function () {
      await notify(owner(repos.r1), owner(repos.r3), owner(repos.r2), owner(repos.r3), owner(repos.r1));
      expect(repositoryOrder((await walk('bot', 50)).items)).to.deep.equal([repos.r1, repos.r2, repos.r1]);
      // A page whose only row is left out is empty and still goes on.
      const second = await list('bot', `?limit=1&cursor=${feedCursor(1)}`);
      expect(second.body).to.deep.include({ items: [], nextCursor: feedCursor(2) });
      core.replaceFixture(fixture(repos, names, { grantOnR2: 'revoked' }));
      const { items, pages } = await walk('bot', 1);
      expect(repositoryOrder(items)).to.deep.equal([repos.r1, repos.r1]);
      expect(pages.map((p) => p.items.length)).to.deep.equal([1, 0, 0, 0, 1, 0]);
    });

    it('refuses a revoked credential with 401, and answers 503 while core is unavailable', async function () {
      await notify(owner(repos.r1));
      const missing = await list(null);
      expect(missing.status).to.equal(401);
      core.setFaults({ authorization: 'unavailable' });
      const unavailable = await list('bot');
      expect(unavailable.status).to.equal(503);
      expect(unavailable.body.error.code).to.equal('AUTHORIZATION_UNAVAILABLE');
      core.setFaults({ authorization: 'ok' });
      core.replaceFixture(fixture(repos, names, { credential: 'revoked' }));
      const revoked = await list('bot');
      expect(revoked.status).to.equal(401);
      expect(revoked.body.error.code).to.equal('TOKEN_REJECTED');
    });

    it('refuses bad limits, forged cursors, another principal\'s feed cursor and cursors of other kinds', async function () {
      await notify(owner(repos.r1), owner(repos.r1, names.bob, 'human'));
      const bobCursor = (await list('bob')).body.nextCursor;
      expect(bobCursor).to.be.a('string');
      for (const limit of ['0', '201', 'abc']) expect((await list('bot', `?limit=${limit}`)).body.error.code).to.equal('LIMIT_INVALID');
      const foreign = [
        bobCursor,
        feedCursor(1, names.bot, 'human'),
        'not-a-cursor',
        `${feedCursor(1).slice(0, -2)}AA`,
        api.deps.cursors.encode(inboxCursorBinding(owner(repos.r1)), 1),
        api.deps.cursors.encode({ kind: 'room', roomId: ulid() }, 1),
      ];
      for (const cursor of foreign) {
        const res = await list('bot', `?cursor=${encodeURIComponent(cursor)}`);
        expect(res.status, cursor).to.equal(400);
        expect(res.body.error.code).to.equal('CURSOR_INVALID');
      }
      expect((await call('DELETE', '/v1/inbox', 'bot')).status).to.equal(405);
    });
  });

  describe('acknowledgePrincipalInbox', function () {
    it('moves the feed checkpoint forward, each repository checkpoint with it, and answers a position at or behind it as a replay', async function () {
      // feed: 1 R1#1, 2 R2#1, 3 R1#2, 4 R2#2
      await notify(owner(repos.r1), owner(repos.r2), owner(repos.r1), owner(repos.r2));
      const items = (await list('bot')).body.items;
      expect(await ack('bot', { throughCursor: feedCursor(3), expectedCursor: null })).to.deep.equal({
        status: 200,
        body: { acknowledgedCursor: feedCursor(3), replayed: false },
      });
      const page = (await list('bot')).body;
      expect(page.acknowledgedCursor).to.equal(feedCursor(3));
      expect(page.items.map((n: any) => n.acknowledged)).to.deep.equal([true, true, true, false]);
      // The repositories' own inboxes agree.
      expect((await call('GET', `/v1/repositories/${repos.r1}/inbox`, 'bot')).body.acknowledgedCursor).to.equal(items[2].cursor);
      expect((await call('GET', `/v1/repositories/${repos.r2}/inbox`, 'bot')).body.acknowledgedCursor).to.equal(items[1].cursor);
      for (const body of [{ throughCursor: feedCursor(3) }, { throughCursor: feedCursor(1), expectedCursor: feedCursor(3) }]) {
        expect(await ack('bot', body)).to.deep.equal({ status: 200, body: { acknowledgedCursor: feedCursor(3), replayed: true } });
      }
      expect((await ack('bot', { throughCursor: feedCursor(4), expectedCursor: feedCursor(3) })).body).to.deep.equal({
        acknowledgedCursor: feedCursor(4),
        replayed: false,
      });
      expect((await api.deps.store.inboxes.findByKey(inboxKey(owner(repos.r2))))!.ackSeq).to.equal(2);
    });

    it('refuses a stale expected checkpoint with 409, a position beyond the feed with 404, foreign cursors with 400', async function () {
      await notify(owner(repos.r1), owner(repos.r2), owner(repos.r1));
      await notify(owner(repos.r1, names.bob, 'human'));
      const stale = await ack('bot', { throughCursor: feedCursor(2), expectedCursor: feedCursor(1) });
      expect(stale.status).to.equal(409);
      expect(stale.body.error.code).to.equal('INBOX_CHECKPOINT_STALE');
      await ack('bot', { throughCursor: feedCursor(1), expectedCursor: null });
      expect((await ack('bot', { throughCursor: feedCursor(3), expectedCursor: null })).body.error.code).to.equal('INBOX_CHECKPOINT_STALE');
      for (const seq of [4, 99]) {
        const beyond = await ack('bot', { throughCursor: feedCursor(seq) });
        expect(beyond.status).to.equal(404);
        expect(beyond.body.error.code).to.equal('RESOURCE_NOT_FOUND');
      }
      // A principal with no feed: its MAC-valid cursor names nothing.
      expect((await ack('carol', { throughCursor: feedCursor(1, names.carol, 'human') })).status).to.equal(404);
      const foreign = [feedCursor(1, names.bob, 'human'), api.deps.cursors.encode(inboxCursorBinding(owner(repos.r1)), 1), 'x'.repeat(36)];
      for (const cursor of foreign) {
        expect((await ack('bot', { throughCursor: cursor })).body.error.code, cursor).to.equal('CURSOR_INVALID');
        expect((await ack('bot', { throughCursor: feedCursor(2), expectedCursor: cursor })).body.error.code, cursor).to.equal('CURSOR_INVALID');
      }
      expect((await api.deps.store.principalFeeds.find({ principalKind: 'bot', principalId: names.bot }))!.ackSeq).to.equal(1);
    });

    it('refuses malformed bodies with REQUEST_INVALID, and callers core does not confirm', async function () {
      await notify(owner(repos.r1));
      for (const body of [{}, { throughCursor: feedCursor(1), extra: 1 }, { throughCursor: 5 }, [feedCursor(1)], '{"throughCursor":']) {
        const res = await ack('bot', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('REQUEST_INVALID');
      }
      expect((await ack(null, { throughCursor: feedCursor(1) })).status).to.equal(401);
      core.setFaults({ authorization: 'unavailable' });
      expect((await ack('bot', { throughCursor: feedCursor(1) })).body.error.code).to.equal('AUTHORIZATION_UNAVAILABLE');
      core.setFaults({ authorization: 'ok' });
      core.replaceFixture(fixture(repos, names, { credential: 'revoked' }));
      expect((await ack('bot', { throughCursor: feedCursor(1) })).body.error.code).to.equal('TOKEN_REJECTED');
      expect((await api.deps.store.principalFeeds.find({ principalKind: 'bot', principalId: names.bot }))!.ackSeq).to.equal(0);
    });

    it('lets exactly one of 20 racing acknowledgements with one expected checkpoint win', async function () {
      await notify(...Array.from({ length: 21 }, (_, i) => owner(i % 2 ? repos.r1 : repos.r2)));
      await ack('bot', { throughCursor: feedCursor(1), expectedCursor: null });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ack('bot', { throughCursor: feedCursor(2 + i), expectedCursor: feedCursor(1) })));
      const won = results.filter((r) => r.status === 200);
      expect(won).to.have.length(1);
      expect(won[0]!.body.replayed).to.equal(false);
      expect(results.filter((r) => r.status === 409 && r.body.error.code === 'INBOX_CHECKPOINT_STALE')).to.have.length(19);
      expect((await list('bot')).body.acknowledgedCursor).to.equal(won[0]!.body.acknowledgedCursor);
    });
  });
});
