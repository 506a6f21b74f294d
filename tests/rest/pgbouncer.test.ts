import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { InboxPageResponse, MessagePageResponse, MessageResponse, NotificationResponse, RoomResponse } from '@chat/contracts';
import pg from 'pg';
import { ulid } from 'ulid';
import { ApiClient, bearer, errorCode, type ApiResponse } from '../harness/api-client.ts';
import { startChatProcess } from '../harness/chat-process.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { startPgBouncer, type PgBouncerProcess } from '../harness/pgbouncer-process.ts';
import { createScratchDatabase, type ScratchDatabase } from '../harness/scratch-database.ts';
import { seededRandom } from '../harness/seeded-random.ts';
import { checkDeliveries, expectClean, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import { ResumingSseClient } from '../harness/sse-resuming-client.ts';
import { testConfig } from '../harness/test-config.ts';

/** Server connections PgBouncer keeps to the database: fewer than either process's own pool. */
const SERVER_POOL = 3;
const PROCESS_POOL = 6;
const WRITERS = 12;
const MESSAGES_PER_WRITER = 15;
const STREAM_CLIENTS = 4;
/** The key of migrate.ts's advisory lock. */
const MIGRATION_LOCK_ID = 7_216_530_113;
const MIGRATIONS = readdirSync(join(testConfig.repoRoot, 'libraries/store/migrations'))
  .filter((f) => f.endsWith('.sql'))
  .sort();

describe(`PgBouncer in transaction mode: 2 processes sharing ${SERVER_POOL} server connections (DATABASE_POOLER=transaction)`, function () {
  this.timeout(300_000);
  let bouncer: PgBouncerProcess;
  let database: ScratchDatabase;
  let cluster: Cluster | undefined;
  let serviceUrl: string;

  before(async () => {
    bouncer = await startPgBouncer({ serverPoolSize: SERVER_POOL });
    database = await createScratchDatabase('pgbouncer');
    // The statement timeout a pooled connection cannot carry from the client, set where
    // docs/operations.md says: on the database (or the role), so every server connection has it.
    await direct(database.url, (client) => client.query(`ALTER DATABASE ${databaseName(database.url)} SET statement_timeout = '10s'`));
    serviceUrl = bouncer.urlFor(database.url);
    // Both processes start at once, so their migrations race through the pooler.
    cluster = await startCluster(2, {
      DATABASE_URL: serviceUrl,
      DATABASE_POOLER: 'transaction',
      DATABASE_POOL_SIZE: String(PROCESS_POOL),
      APPEND_RATE_LIMIT: '1000000',
    });
  });
  after(async () => {
    await cluster?.stop();
    await bouncer?.stop();
    await database?.drop();
  });

  it('a process without DATABASE_POOLER=transaction is refused at connect (its statement timeout is a startup parameter PgBouncer does not accept)', async () => {
    let failure: unknown;
    try {
      const chat = await startChatProcess({ name: 'chat-unpooled', env: { DATABASE_URL: serviceUrl, REDIS_URL: testConfig.redisUrl, REDIS_KEY_PREFIX: `pgb-${ulid().toLowerCase()}` } });
      await chat.stop();
    } catch (err) {
      failure = err;
    }
    expect(String(failure)).to.match(/unsupported startup parameter: statement_timeout/);
  });

  it('migrations at start: two processes migrating at once through the pooler apply each file once and leave no advisory lock held', async () => {
    await direct(database.url, async (client) => {
      const applied = await client.query<{ name: string }>('SELECT name FROM chat_migrations ORDER BY name');
      expect(applied.rows.map((r) => r.name)).to.deep.equal(MIGRATIONS);
      // A session-level lock taken through a transaction pooler stays on whichever server
      // connection ran it; the transaction-scoped one ends with the migration's transaction. (The
      // outbox relay's turn holds a lock of its own for a moment, so only the migrations' key counts.)
      const locks = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND (classid::bigint << 32) + objid::bigint = $1`,
        [MIGRATION_LOCK_ID],
      );
      expect(Number(locks.rows[0]!.n)).to.equal(0);
    });
  });

  it('a request that waits longer than query_wait_timeout for a server connection is a 503 STORE_UNAVAILABLE with Retry-After, and the next one succeeds', async () => {
    // A deployment of its own (database and Redis prefix), on a pooler with one server connection.
    const narrow = await startPgBouncer({ serverPoolSize: 1, queryWaitTimeoutSeconds: 2 });
    const own = await createScratchDatabase('pgbouncer_narrow');
    const holder = new pg.Client({ connectionString: narrow.urlFor(own.url) });
    let chat: Awaited<ReturnType<typeof startChatProcess>> | undefined;
    let api: ApiClient | undefined;
    try {
      chat = await startChatProcess({
        name: 'chat-narrow-pool',
        env: {
          DATABASE_URL: narrow.urlFor(own.url),
          DATABASE_POOLER: 'transaction',
          REDIS_URL: testConfig.redisUrl,
          REDIS_KEY_PREFIX: `pgb-${ulid().toLowerCase()}`,
          CORE_URL: cluster!.core.url,
        },
      });
      api = new ApiClient(chat.url);
      const { scenario, actors } = await cluster!.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const reader = await actors.reader();
      // The pooler's only server connection, held by an open transaction.
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT 1');
      const refused = await api.list(scope, reader);
      expect(refused.status, refused.text).to.equal(503);
      expect(errorCode(refused)).to.equal('STORE_UNAVAILABLE');
      expect(refused.headers['retry-after']).to.match(/^[0-9]+$/);
      await holder.query('COMMIT');
      const listed = await api.list<MessagePageResponse>(scope, reader);
      expect(listed.status, listed.text).to.equal(200);
    } finally {
      api?.close();
      await holder.end().catch(() => undefined);
      await chat?.stop();
      await narrow.stop();
      await own.drop();
    }
  });

  it('concurrent appends with same-key retries through both processes, list pages, room streams resumed with Last-Event-ID and mentions in the inbox: 0 lost, 0 duplicated', async () => {
    const { nodes } = cluster!;
    const seed = testConfig.concurrencySeed;
    const random = seededRandom(seed);
    const context = `seed ${seed} (rerun with CONCURRENCY_SEED=${seed})`;
    const { scenario, actors } = await cluster!.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const [writer, appendBot, reader] = [await actors.writer(), await actors.appendBot(), await actors.reader()];
    // A person's mentions need the forge's resource credential; a bot's do not.
    const coreAuthorization = `Bearer ${await actors.coreResource()}`;
    const node = () => nodes[Math.floor(random() * nodes.length)]!;

    // Server connections are sampled all along: never more than the server pool, while both
    // processes hold more client connections than that.
    const pools = { maxServers: 0, maxClients: 0, samples: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const row = (await bouncer.show('POOLS')).find((p) => p.database === databaseName(database.url));
        if (row) {
          const servers = ['sv_active', 'sv_idle', 'sv_used', 'sv_tested', 'sv_login'].reduce((n, k) => n + Number(row[k] ?? 0), 0);
          const clients = ['cl_active', 'cl_waiting'].reduce((n, k) => n + Number(row[k] ?? 0), 0);
          pools.maxServers = Math.max(pools.maxServers, servers);
          pools.maxClients = Math.max(pools.maxClients, clients);
          pools.samples += 1;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const streams = Array.from({ length: STREAM_CLIENTS }, () =>
      new ResumingSseClient({
        pickBase: () => node().baseUrl,
        path: `/v1/repositories/${scope.repositoryId}/room/events`,
        token: reader,
        random,
        // Each client drops its connection now and then and resumes from its last id, on either process.
        reconnectAfterMs: [100, 500],
      }),
    );
    for (const s of streams) s.start();

    // A careful client retries a 503 with the same key; every answer is checked against the contract.
    const append = async (body: unknown, token: string, key: string): Promise<ApiResponse<MessageResponse>> => {
      for (let attempt = 0; ; attempt++) {
        const answer = await node().append<MessageResponse>(scope, token, body, { key, ...(token === writer ? { coreAuthorization } : {}) });
        if (answer.status !== 503 || attempt >= 30) return answer;
        await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
      }
    };
    const accepted = new Map<string, { writer: number; n: number }>();
    const mentioning = new Set<string>();
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        const token = w % 2 === 0 ? writer : appendBot;
        for (let n = 0; n < MESSAGES_PER_WRITER; n++) {
          const key = ulid();
          const mention = n % 3 === 0;
          const prefix = `writer ${w} message ${n} for `;
          const body = mention
            ? {
                bodyMarkdown: `${prefix}@${scenario.users.reader}`,
                mentions: [{ principalKind: 'human', principalId: scenario.users.reader, startByte: Buffer.byteLength(prefix), endByte: Buffer.byteLength(`${prefix}@${scenario.users.reader}`) }],
              }
            : { bodyMarkdown: `writer ${w} message ${n}` };
          const copies = 1 + Math.floor(random() * 3);
          const answers = await Promise.all(Array.from({ length: copies }, () => append(body, token, key)));
          if (random() < 0.3) answers.push(await append(body, token, key));
          const statuses = answers.map((a) => a.status).sort();
          expect(statuses.filter((s) => s === 201), `${context}: one 201 per key, got ${statuses} ${answers.map((a) => a.text).join(' ')}`).to.have.length(1);
          expect(statuses.filter((s) => s !== 201 && s !== 200), `${context}: ${statuses}`).to.deep.equal([]);
          expect(new Set(answers.map((a) => a.body.messageId)).size, `${context}: every retry got the original`).to.equal(1);
          const messageId = answers[0]!.body.messageId;
          accepted.set(messageId, { writer: w, n });
          if (mention) mentioning.add(messageId);
          // Paced, so the stream clients drop and resume several times while messages arrive.
          await new Promise((r) => setTimeout(r, random() * 100));
        }
      }),
    );
    expect(accepted.size).to.equal(WRITERS * MESSAGES_PER_WRITER);

    // List pages of random sizes through random processes: exactly the accepted messages, once each, in each writer's order.
    const listed: MessageResponse[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=${1 + Math.floor(random() * 60)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await node().list<MessagePageResponse>(scope, reader, query);
      expect(page.status, page.text).to.equal(200);
      listed.push(...page.body.items);
      cursor = page.body.nextCursor ?? null;
    } while (cursor !== null);
    const listedIds = listed.map((m) => m.messageId);
    expect(new Set(listedIds).size, `${context}: no duplicates`).to.equal(listedIds.length);
    expect([...listedIds].sort(), `${context}: exactly the accepted messages`).to.deep.equal([...accepted.keys()].sort());
    const lastOf = new Map<number, number>();
    for (const m of listed) {
      const { writer: w, n } = accepted.get(m.messageId)!;
      expect(n, `${context}: writer ${w} order`).to.be.greaterThan(lastOf.get(w) ?? -1);
      lastOf.set(w, n);
    }
    const room = await node().getRoom<RoomResponse>(scope, reader);
    expect(room.body.messageCount).to.equal(listed.length);

    // Every stream client ends up with the whole history, resumed across its reconnects.
    const history = await readRoomHistory(nodes[0]!, scope, reader);
    await waitFor(() => streams.every((s) => checkDeliveries(history, s.received).lost === 0), 60_000, () => `${context}: streams incomplete`);
    for (const s of streams) await s.stop();
    for (const [i, s] of streams.entries()) {
      const report = checkDeliveries(history, s.received);
      expect(s.fatal, `${context}: stream client ${i}`).to.deep.equal([]);
      expect(s.connections, `${context}: stream client ${i} resumed`).to.be.greaterThan(1);
      expectClean(report, `${context}: stream client ${i}`);
    }

    // The reader's inbox, through both processes: each mentioning message once.
    let inbox: NotificationResponse[] = [];
    await waitFor(
      async () => (inbox = await listInbox(node(), scope.repositoryId, reader)).length >= mentioning.size,
      60_000,
      () => `${context}: inbox has ${inbox.length} of ${mentioning.size} notifications`,
    );
    for (const api of nodes) {
      const items = await listInbox(api, scope.repositoryId, reader);
      const ids = items.map((i) => i.messageId);
      expect(new Set(ids).size, `${context}: inbox without duplicates`).to.equal(ids.length);
      expect([...ids].sort(), `${context}: inbox holds exactly the mentions`).to.deep.equal([...mentioning].sort());
    }

    sampling = false;
    await sampler;
    printReport('pgbouncer', { messages: listed.length, mentions: mentioning.size, streams: STREAM_CLIENTS, ...pools });
    expect(pools.samples).to.be.greaterThan(0);
    expect(pools.maxServers, 'server connections never exceed the pool').to.be.at.most(SERVER_POOL);
    expect(pools.maxClients, 'more clients than server connections').to.be.greaterThan(SERVER_POOL);
  });
});

/** Every page of an inbox, through the validating client. */
async function listInbox(api: ApiClient, repositoryId: string, token: string): Promise<NotificationResponse[]> {
  const items: NotificationResponse[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api.send<InboxPageResponse>({ method: 'GET', path: `/v1/repositories/${repositoryId}/inbox?${query}`, headers: bearer(token) });
    expect(page.status, page.text).to.equal(200);
    items.push(...page.body.items);
    cursor = page.body.nextCursor ?? null;
  } while (cursor !== null);
  return items;
}

async function waitFor(done: () => boolean | Promise<boolean>, timeoutMs: number, why: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(why());
    await new Promise((r) => setTimeout(r, 200));
  }
}

function databaseName(url: string): string {
  return new URL(url).pathname.slice(1);
}

/** A connection straight to PostgreSQL, around PgBouncer, for what the test checks in the database. */
async function direct<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
