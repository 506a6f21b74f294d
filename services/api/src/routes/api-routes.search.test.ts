import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InProcessBackbone } from '@chat/backbone';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { createLogger } from '@chat/observability';
import { migrate, openDatabase, type Database } from '@chat/store';
import { ErrorEnvelopeSchema, MessageHistoryPageResponseSchema, MessageResponseSchema, openApiDocument, SearchPageResponseSchema } from '@chat/contracts';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { assembleProcessResources } from '@chat/process-resources';
import { createApiRuntime, type ApiRuntime } from '../runtime.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SERVICE_TOKEN = 'search-routes-test-service-token';
/** Searches (and appends) each principal may make per window in this suite. */
const RATE_LIMIT = 60;

const SCHEMAS = {
  SearchPageResponse: SearchPageResponseSchema,
  MessageResponse: MessageResponseSchema,
  MessageHistoryPageResponse: MessageHistoryPageResponseSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
};

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

const REPO_SEARCH = '/v1/repositories/{repositoryId}/search';
const ROOM_SEARCH = '/v1/repositories/{repositoryId}/room/search';
const BRANCH_SEARCH = '/v1/repositories/{repositoryId}/branches/{branchId}/room/search';

/** One run's principals: fresh IDs, so budgets of earlier runs in the same window do not count. */
const run = ulid().slice(-8).toLowerCase();
const alice = `u_alice_${run}`;
const bob = `u_bob_${run}`;
const carol = `u_carol_${run}`;
const dave = `u_dave_${run}`;
const bot = `b_ci_${run}`;

interface World {
  repositoryId: string;
  branchId: string;
  sealedBranchId: string;
  otherRepositoryId: string;
}

function fixture(w: World, options: { grant?: string; bobMember?: boolean; sealed?: boolean } = {}) {
  return {
    users: [{ id: alice }, { id: bob }, { id: carol }, { id: dave }],
    organizations: [{ id: 'o_acme' }],
    repositories: [
      {
        id: w.repositoryId,
        state: 'active',
        branches: [
          { id: w.branchId, state: 'active' },
          { id: w.sealedBranchId, state: options.sealed ? 'deleted' : 'active' },
        ],
        members: { [alice]: 'write', [dave]: 'read', ...(options.bobMember === false ? {} : { [bob]: 'read' }) },
      },
      // Alice writes here; nobody else of the test may read it.
      { id: w.otherRepositoryId, state: 'active', branches: [], members: { [alice]: 'write' } },
    ],
    bots: [
      {
        id: bot,
        credentials: [{ id: `c_${bot}`, state: 'active' }],
        grants: [{ id: `g_${bot}`, repositoryId: w.repositoryId, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['room:read'], state: options.grant ?? 'active' }],
      },
    ],
  };
}

describe('search routes over HTTP (PostgreSQL, dev-core)', function () {
  this.timeout(30_000);
  let database: Database;
  let core: DevCoreHandle;
  let api: ApiRuntime;
  let server: Server;
  let base: string;
  let world: World;
  const tokens: Record<string, string> = {};

  before(async () => {
    const logger = createLogger({ name: 'search-test', level: 'silent' });
    world = { repositoryId: ulid(), branchId: ulid(), sealedBranchId: ulid(), otherRepositoryId: ulid() };
    core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, fixture: fixture(world), logger });
    database = await openDatabase({ kind: 'postgres', url: DATABASE_URL, poolSize: 20 });
    await migrate(database);
    const resources = await assembleProcessResources({
      database,
      backbone: new InProcessBackbone(),
      logger,
      core: { url: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 2000 },
      cursor: { secret: undefined, previousSecrets: [] },
    });
    api = createApiRuntime({ resources, logger, bodyLimitBytes: 262_144, rateLimit: { limit: RATE_LIMIT, windowSeconds: 3600, per: 'sender-room' } });
    server = createServer(api.listener).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const user of [alice, bob, carol, dave]) tokens[user] = await core.mintToken({ type: 'human', subjectId: user });
    tokens[bot] = await core.mintToken({ type: 'bot', subjectId: bot });

    const { repositoryId, branchId, sealedBranchId, otherRepositoryId } = world;
    await post(`/v1/repositories/${repositoryId}/room/messages`, 'we should rename `parse_config` before the release');
    await post(`/v1/repositories/${repositoryId}/branches/${branchId}/room/messages`, 'parse_config breaks on the branch, see https://ci.example.com/run/42');
    await post(`/v1/repositories/${repositoryId}/branches/${sealedBranchId}/room/messages`, 'parse_config was fixed in 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345 before the branch went');
    await post(`/v1/repositories/${otherRepositoryId}/room/messages`, 'parse_config in a repository nobody else reads');
    for (const [i, text] of ['paging retry one', 'paging retrying two', 'paging retry three', 'paging retryable four', 'paging retry five'].entries()) {
      await post(`/v1/repositories/${repositoryId}/room/messages`, `${text} ${i}`);
    }
    // The deleted branch's room is sealed: readable, no longer writable.
    core.replaceFixture(fixture(world, { sealed: true }));
  });
  after(async () => {
    server.close();
    server.closeAllConnections();
    await database.close();
    await core.close();
  });
  afterEach(() => core.replaceFixture(fixture(world, { sealed: true })));

  async function call(path: string, as: string | null, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(as ? { authorization: `Bearer ${tokens[as]}` } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  }

  async function post(path: string, bodyMarkdown: string): Promise<Json> {
    const res = await call(path, alice, { method: 'POST', body: { bodyMarkdown }, headers: { 'idempotency-key': ulid() } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  const repoSearch = (q: string, extra = '', repositoryId = world.repositoryId) => `/v1/repositories/${repositoryId}/search?q=${encodeURIComponent(q)}${extra}`;
  const roomSearch = (q: string, extra = '') => `/v1/repositories/${world.repositoryId}/room/search?q=${encodeURIComponent(q)}${extra}`;
  const branchSearch = (branchId: string, q: string) => `/v1/repositories/${world.repositoryId}/branches/${branchId}/room/search?q=${encodeURIComponent(q)}`;
  const bodies = (res: { body: any }) => (res.body.items as Json[]).map((i) => i.message.bodyMarkdown as string).sort();

  it('searches the repository room and all its branch rooms, sealed ones included, never another repository', async function () {
    const res = await call(repoSearch('parse_config'), bob);
    expect(res.status).to.equal(200);
    expectDocumented('GET', REPO_SEARCH, res);
    expect(bodies(res)).to.deep.equal([
      'parse_config breaks on the branch, see https://ci.example.com/run/42',
      'parse_config was fixed in 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345 before the branch went',
      'we should rename `parse_config` before the release',
    ]);
    for (const item of res.body.items as Json[]) {
      expect(item.roomId).to.equal(item.message.roomId);
      expect(item.branchId).to.equal(item.message.branchId ?? null);
      expect(item.highlights[0].some((run: Json) => run.match && run.text === 'parse_config')).to.equal(true);
    }
    expect(res.body.nextCursor).to.equal(null);
  });

  it('gives each result its durable room cursor, which opens the room\'s history at the message', async function () {
    const res = await call(repoSearch('3f9a2b7'), bob);
    expect(res.body.items).to.have.length(1);
    const [item] = res.body.items as Json[];
    const history = await call(`/v1/repositories/${world.repositoryId}/branches/${world.sealedBranchId}/room/history?at=${item!.cursor}&limit=1`, bob);
    expect(history.status).to.equal(200);
    expect(history.body.items[0].messageId).to.equal(item!.message.messageId);
  });

  it('finds a message right after its append', async function () {
    const marker = `fresh_${ulid().toLowerCase()}`;
    const appended = await post(`/v1/repositories/${world.repositoryId}/room/messages`, `just said ${marker}`);
    const res = await call(repoSearch(marker), dave);
    expect(res.body.items.map((i: Json) => i.message.messageId)).to.deep.equal([appended.messageId]);
  });

  it('searches one room on the single-room forms, and narrows with in:', async function () {
    const room = await call(roomSearch('parse_config'), bob);
    expectDocumented('GET', ROOM_SEARCH, room);
    expect(bodies(room)).to.deep.equal(['we should rename `parse_config` before the release']);
    const branch = await call(branchSearch(world.branchId, 'parse_config'), bob);
    expectDocumented('GET', BRANCH_SEARCH, branch);
    expect(bodies(branch)).to.deep.equal(['parse_config breaks on the branch, see https://ci.example.com/run/42']);
    expect(bodies(await call(repoSearch('parse_config in:repository'), bob))).to.deep.equal(bodies(room));
    expect(bodies(await call(repoSearch(`parse_config in:${world.branchId}`), bob))).to.deep.equal(bodies(branch));
    expect(bodies(await call(repoSearch('parse_config has:link'), bob))).to.deep.equal(bodies(branch));
    expect(bodies(await call(repoSearch(`has:code from:${alice}`), bob))).to.deep.equal(['we should rename `parse_config` before the release']);
    const inOnRoom = await call(roomSearch('parse_config in:repository'), bob);
    expect(inOnRoom.status).to.equal(400);
    expect(inOnRoom.body.error.code).to.equal('REQUEST_INVALID');
  });

  it('answers a query it cannot read, a bad order, limit or cursor with 400 in the envelope', async function () {
    const cases: Array<[string, string]> = [
      [repoSearch('"unclosed phrase'), 'REQUEST_INVALID'],
      [repoSearch('from:'), 'REQUEST_INVALID'],
      [repoSearch('has:pictures'), 'REQUEST_INVALID'],
      [repoSearch('in:main'), 'REQUEST_INVALID'],
      [repoSearch('before:yesterday'), 'REQUEST_INVALID'],
      [repoSearch('   '), 'REQUEST_INVALID'],
      [`/v1/repositories/${world.repositoryId}/search`, 'REQUEST_INVALID'],
      [repoSearch('x'.repeat(513)), 'REQUEST_INVALID'],
      [repoSearch('paging', '&order=oldest'), 'REQUEST_INVALID'],
      [repoSearch('paging', '&limit=0'), 'LIMIT_INVALID'],
      [repoSearch('paging', '&cursor=nonsense'), 'CURSOR_INVALID'],
    ];
    for (const [path, code] of cases) {
      const res = await call(path, bob);
      expect(res.status, path).to.equal(400);
      expect(res.body.error.code, path).to.equal(code);
      expectDocumented('GET', REPO_SEARCH, res);
    }
    // A cursor of one search does not continue another.
    const first = await call(repoSearch('paging', '&limit=1'), bob);
    const other = await call(repoSearch('retry', `&limit=1&cursor=${first.body.nextCursor}`), bob);
    expect(other.status).to.equal(400);
    expect(other.body.error.code).to.equal('CURSOR_INVALID');
  });

  async function allPages(q: string, order: 'newest' | 'relevance', limit: number): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 20; guard++) {
      const res = await call(repoSearch(q, `&order=${order}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`), bob);
      expect(res.status).to.equal(200);
      expectDocumented('GET', REPO_SEARCH, res);
      seen.push(...res.body.items.map((i: Json) => i.message.bodyMarkdown));
      cursor = res.body.nextCursor;
      if (cursor === null) return seen;
    }
    throw new Error('search pages did not end');
  }

  it('pages newest first, and most relevant first, through every match once', async function () {
    expect(await allPages('paging', 'newest', 2)).to.deep.equal(['paging retry five 4', 'paging retryable four 3', 'paging retry three 2', 'paging retrying two 1', 'paging retry one 0']);
    const relevant = await allPages('paging retry', 'relevance', 2);
    expect(relevant).to.have.length(5);
    expect(new Set(relevant.slice(0, 3))).to.deep.equal(new Set(['paging retry one 0', 'paging retry three 2', 'paging retry five 4']));
    expect(await allPages('paging retry', 'relevance', 1)).to.deep.equal(relevant);
  });

  describe('authorization, answered as for the room\'s other reads', function () {
    async function expectSameDenial(as: string, repositoryId = world.repositoryId): Promise<void> {
      const search = await call(repoSearch('parse_config', '', repositoryId), as);
      const room = await call(`/v1/repositories/${repositoryId}/room/messages`, as);
      const roomSearchRes = await call(`/v1/repositories/${repositoryId}/room/search?q=parse_config`, as);
      expect(room.status).to.equal(403);
      for (const res of [search, roomSearchRes]) {
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal(room.body.error.code);
      }
      expectDocumented('GET', REPO_SEARCH, search);
    }

    it('denies a principal that is no member, and another repository, with 403', async function () {
      await expectSameDenial(carol);
      await expectSameDenial(bob, world.otherRepositoryId);
    });

    it('lets a bot with a room:read grant search, and denies it once the grant is revoked', async function () {
      const allowed = await call(repoSearch('parse_config'), bot);
      expect(allowed.status).to.equal(200);
      expect(allowed.body.items).to.have.length(3);
      core.replaceFixture(fixture(world, { sealed: true, grant: 'revoked' }));
      await expectSameDenial(bot);
    });

    it('denies a member once removed', async function () {
      expect((await call(repoSearch('parse_config'), bob)).status).to.equal(200);
      core.replaceFixture(fixture(world, { sealed: true, bobMember: false }));
      await expectSameDenial(bob);
    });

    it('searches a sealed room as it reads it', async function () {
      const history = await call(`/v1/repositories/${world.repositoryId}/branches/${world.sealedBranchId}/room/history`, bob);
      expect(history.status).to.equal(200);
      const res = await call(branchSearch(world.sealedBranchId, 'parse_config'), bob);
      expect(res.status).to.equal(200);
      expect(bodies(res)).to.deep.equal(['parse_config was fixed in 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345 before the branch went']);
    });
  });

  it('limits each principal\'s searches per window, answering 429 with Retry-After', async function () {
    let limited: { status: number; body: any; headers: Headers } | undefined;
    for (let i = 0; i <= RATE_LIMIT && !limited; i++) {
      const res = await call(repoSearch('paging'), dave);
      if (res.status === 429) limited = res;
      else expect(res.status).to.equal(200);
    }
    expect(limited, 'a search past the budget').to.not.equal(undefined);
    expect(limited!.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(limited!.headers.get('retry-after'))).to.be.greaterThan(0);
    expectDocumented('GET', REPO_SEARCH, limited!);
  });
});
