import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import type { InboxPageResponse, MessageResponse, NotificationResponse } from '@chat/contracts';
import pg from 'pg';
import { ulid } from 'ulid';
import { ApiClient, bearer } from '../harness/api-client.ts';
import { testConfig } from '../harness/test-config.ts';
import { startDistributedCluster, type DistributedCluster } from './distributed-cluster.ts';
import { ResumingInboxReader } from './inbox-stream-reader.ts';
import { seededRandom } from '../harness/seeded-random.ts';

const MESSAGES = 1000;
const WRITERS = 16;
const KILL_AFTER = 350;

interface Target {
  kind: 'human' | 'bot';
  id: string;
  token: string;
}

interface Expected {
  messageId: string;
  roomId: string;
  branchId: string | null;
  senderKind: 'user' | 'bot';
  senderId: string;
  spans: Array<{ startByte: number; endByte: number }>;
}

/** The world of this test: one repository with two branches, a human and a bot writer, 6 human and 4 bot targets. */
function buildWorld() {
  const s = ulid().slice(-8).toLowerCase();
  const repositoryId = ulid();
  const branchIds = [ulid(), ulid()];
  const writer = `u_writer_${s}`;
  const humans = Array.from({ length: 6 }, (_, i) => `u_target${i}_${s}`);
  const bots = Array.from({ length: 4 }, (_, i) => `b_target${i}_${s}`);
  const appender = { id: `b_appender_${s}`, credentialId: `c_appender_${s}` };
  const grant = (id: string, capabilities: Array<'room:read' | 'message:append'>) => ({
    id,
    repositoryId,
    subject: { kind: 'organization', id: `o_${s}` },
    capabilities,
    state: 'active',
  });
  const fixture = {
    users: [writer, ...humans].map((id) => ({ id })),
    organizations: [{ id: `o_${s}` }],
    repositories: [
      {
        id: repositoryId,
        state: 'active',
        branches: branchIds.map((id) => ({ id, state: 'active' })),
        members: Object.fromEntries([[writer, 'write'], ...humans.map((h) => [h, 'read'])]),
      },
    ],
    bots: [
      { id: appender.id, credentials: [{ id: appender.credentialId, state: 'active' }], grants: [grant(`g_append_${s}`, ['room:read', 'message:append'])] },
      ...bots.map((id, i) => ({ id, credentials: [{ id: `c_${id}`, state: 'active' }], grants: [grant(`g_read${i}_${s}`, ['room:read'])] })),
    ],
  };
  return { repositoryId, branchIds, writer, humans, bots, appender, fixture };
}

/** A body mentioning `picks` in order (a target may appear twice) and the bindings with their byte spans. */
function mentionBody(n: number, picks: Target[]) {
  let body = `message ${n}:`;
  const mentions = picks.map((target) => {
    body += ' ';
    const startByte = Buffer.byteLength(body);
    body += `@${target.id}`;
    return { principalKind: target.kind, principalId: target.id, startByte, endByte: Buffer.byteLength(body) };
  });
  return { bodyMarkdown: `${body} please look`, mentions };
}

describe('inbox end to end: 2 API, 2 notifier and 2 gateway processes on PostgreSQL + Redis', function () {
  this.timeout(240_000);
  let cluster: DistributedCluster;

  before(async () => {
    cluster = await startDistributedCluster({
      apis: 2,
      gateways: 2,
      notifiers: 2,
      env: {
        api: { APPEND_RATE_LIMIT: '1000000' },
        // Short rotations and rechecks, so handoffs and rechecks happen during the run.
        gateway: { GATEWAY_HEARTBEAT_MS: '1000', GATEWAY_MAX_STREAM_AGE_MS: '4000', GATEWAY_RECHECK_MS: '2000', STREAM_CAP_PER_PRINCIPAL: '1000' },
        // A killed notifier's entries and rows are taken over within seconds instead of 30 s.
        notifier: { NOTIFIER_CLAIM_IDLE_MS: '2000', NOTIFIER_LEASE_MS: '3000', NOTIFIER_SWEEP_INTERVAL_MS: '500', NOTIFIER_SWEEP_GRACE_MS: '1000', NOTIFIER_RETRY_DELAY_MS: '200' },
      },
    });
  });
  after(async () => {
    await cluster?.stop();
  });

  it('1,000 messages mentioning 10 humans and bots: every inbox lists exactly its notifications in order and streams them across reconnects, with a notifier SIGKILLed mid-run', async () => {
    const seed = testConfig.concurrencySeed;
    const random = seededRandom(seed);
    const context = `seed ${seed} (rerun with CONCURRENCY_SEED=${seed})`;
    const world = buildWorld();
    await cluster.core.putFixture(world.fixture);
    const mint = (request: Parameters<DistributedCluster['core']['mintToken']>[0]) => cluster.core.mintToken({ expiresInSeconds: 3600, ...request });
    const targets: Target[] = [
      ...(await Promise.all(world.humans.map(async (id) => ({ kind: 'human' as const, id, token: await mint({ type: 'human', subjectId: id }) })))),
      ...(await Promise.all(world.bots.map(async (id) => ({ kind: 'bot' as const, id, token: await mint({ type: 'bot', subjectId: id, credentialId: `c_${id}` }) })))),
    ];
    const authors = [
      { kind: 'user' as const, id: world.writer, token: await mint({ type: 'human', subjectId: world.writer }), coreResource: await mint({ type: 'core_resource', subjectId: world.writer }) },
      { kind: 'bot' as const, id: world.appender.id, token: await mint({ type: 'bot', subjectId: world.appender.id, credentialId: world.appender.credentialId }) },
    ];
    const apis = cluster.apis.map((a) => new ApiClient(a.url));
    const gatewayUrls = cluster.gateways.map((g) => g.url);
    const scopes = [{ repositoryId: world.repositoryId }, ...world.branchIds.map((branchId) => ({ repositoryId: world.repositoryId, branchId }))];

    // Readers first: their inboxes do not exist yet, so each replays nothing and then goes live. A
    // reader drops most connections itself at a random moment and keeps some until the gateway's handoff.
    const readers = new Map(
      targets.map((t) => [t.id, new ResumingInboxReader({ gatewayUrls, repositoryId: world.repositoryId, token: t.token, connectionMs: () => (random() < 0.25 ? Infinity : 150 + random() * 1500), random })]),
    );
    for (const reader of readers.values()) reader.start();

    // Choices drawn up front, so the seed alone decides them.
    const plans = Array.from({ length: MESSAGES }, (_, n) => {
      const count = 1 + Math.floor(random() * 3);
      const picks: Target[] = [];
      while (picks.length < count) {
        const t = targets[Math.floor(random() * targets.length)]!;
        if (!picks.includes(t)) picks.push(t);
      }
      if (random() < 0.3) picks.push(picks[0]!); // a second span for the same target, merged into one notification
      return { n, picks, scope: scopes[Math.floor(random() * scopes.length)]!, author: authors[n % 2]!, api: apis[Math.floor(random() * apis.length)]! };
    });

    const expected = new Map<string, Expected[]>(targets.map((t) => [t.id, []]));
    let appended = 0;
    let next = 0;
    const killed = cluster.notifiers[0]!;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        for (let plan = plans[next++]; plan; plan = plans[next++]) {
          const { bodyMarkdown, mentions } = mentionBody(plan.n, plan.picks);
          const response = await plan.api.append<MessageResponse>(
            plan.scope,
            plan.author.token,
            { bodyMarkdown, mentions },
            plan.author.kind === 'user' ? { coreAuthorization: `Bearer ${plan.author.coreResource}` } : {},
          );
          expect(response.status, `${context}: ${response.text}`).to.equal(201);
          const message = response.body;
          for (const target of new Set(plan.picks)) {
            const spans = mentions.filter((m) => m.principalId === target.id).map(({ startByte, endByte }) => ({ startByte, endByte }));
            expected.get(target.id)!.push({
              messageId: message.messageId,
              roomId: message.roomId,
              branchId: message.branchId ?? null,
              senderKind: plan.author.kind,
              senderId: plan.author.id,
              spans,
            });
          }
          if (++appended === KILL_AFTER) killed.service.process.kill('SIGKILL');
        }
      }),
    );
    expect(killed.service.hasExited || (await waitExit(killed.service.process)), 'the notifier was killed').to.equal(true);

    // Every inbox, listed through both APIs once complete: exactly its notifications, once each, in order.
    const listed = new Map<string, NotificationResponse[]>();
    for (const target of targets) {
      const want = expected.get(target.id)!;
      const deadline = Date.now() + 60_000;
      let items: NotificationResponse[] = [];
      for (let attempt = 0; ; attempt++) {
        items = await listAll(apis[attempt % apis.length]!, world.repositoryId, target.token, random);
        if (items.length >= want.length || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      listed.set(target.id, items);
      const byMessage = new Map(want.map((e) => [e.messageId, e]));
      const ids = items.map((i) => i.messageId);
      const lostIds = want.filter((e) => !ids.includes(e.messageId)).map((e) => e.messageId);
      const duplicated = ids.length - new Set(ids).size;
      const unexpected = ids.filter((id) => !byMessage.has(id)).length;
      const diagnosis = lostIds.length > 0 ? await fanoutState(cluster.databaseUrl, lostIds) : '';
      expect({ lost: lostIds.length, duplicated, unexpected }, `${context}: inbox of ${target.kind} ${target.id}${diagnosis}`).to.deep.equal({ lost: 0, duplicated: 0, unexpected: 0 });
      for (const item of items) {
        const e = byMessage.get(item.messageId)!;
        expect(item, `${context}: ${item.messageId} for ${target.id}`).to.deep.include({
          targetKind: target.kind,
          targetId: target.id,
          repositoryId: world.repositoryId,
          roomId: e.roomId,
          senderKind: e.senderKind,
          senderId: e.senderId,
          spans: e.spans,
          acknowledged: false,
        });
        expect(item.branchId ?? null).to.equal(e.branchId);
      }
      for (let i = 1; i < items.length; i++) {
        const [a, b] = [items[i - 1]!, items[i]!];
        const before = a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.notificationId < b.notificationId);
        expect(before, `${context}: inbox order of ${target.id} at ${i}`).to.equal(true);
      }
    }

    // Every stream: the same notifications in the same order, across reconnects, none twice.
    for (const target of targets) {
      const reader = readers.get(target.id)!;
      await reader.waitFor(listed.get(target.id)!.length, 30_000);
      await reader.waitForConnections(4, 30_000);
    }
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all([...readers.values()].map((r) => r.stop()));
    const handoffs = [...readers.values()].reduce((n, r) => n + r.controlEvents.filter((e) => e.event === 'handoff').length, 0);
    for (const target of targets) {
      const reader = readers.get(target.id)!;
      const items = listed.get(target.id)!;
      expect(reader.problems, `${context}: stream of ${target.id}`).to.deep.equal([]);
      expect(reader.events.map((e) => e.id), `${context}: stream of ${target.id} delivers its inbox in order, once`).to.deep.equal(items.map((i) => i.cursor));
      expect(reader.events.map((e) => e.data)).to.deep.equal(items);
      expect(reader.connections, `reconnects of ${target.id}`).to.be.greaterThan(3);
      expect(reader.controlEvents.filter((e) => e.event === 'reauthorize')).to.deep.equal([]);
    }
    expect(handoffs, 'gateways rotated streams during the run').to.be.greaterThan(0);

    // The store agrees: one notification per (message, target), nothing else in this repository.
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ total: string; distinct_pairs: string }>(
        'SELECT count(*) AS total, count(DISTINCT (inbox_key, message_id)) AS distinct_pairs FROM notifications WHERE repository_id = $1',
        [world.repositoryId],
      );
      const total = [...expected.values()].reduce((n, list) => n + list.length, 0);
      expect({ total: Number(rows[0]!.total), pairs: Number(rows[0]!.distinct_pairs) }).to.deep.equal({ total, pairs: total });
    } finally {
      await client.end();
    }
    for (const api of apis) api.close();
  });
});

/** Every page of an inbox, at random page sizes, through the validating client. */
async function listAll(api: ApiClient, repositoryId: string, token: string, random: () => number): Promise<NotificationResponse[]> {
  const items: NotificationResponse[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=${50 + Math.floor(random() * 151)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api.send<InboxPageResponse>({ method: 'GET', path: `/v1/repositories/${repositoryId}/inbox?${query}`, headers: bearer(token) });
    expect(page.status, page.text).to.equal(200);
    items.push(...page.body.items);
    cursor = page.body.nextCursor ?? null;
  } while (cursor !== null);
  return items;
}

/** What the store holds about messages whose notifications are missing, for the failure message. */
async function fanoutState(databaseUrl: string, messageIds: string[]): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const fanout = await client.query('SELECT * FROM mention_fanout WHERE message_id = ANY($1)', [messageIds]);
    const made = await client.query('SELECT inbox_key, message_id, seq FROM notifications WHERE message_id = ANY($1)', [messageIds]);
    return `\n  missing: ${messageIds.join(', ')}\n  fanout rows: ${JSON.stringify(fanout.rows)}\n  notifications: ${JSON.stringify(made.rows)}`;
  } finally {
    await client.end();
  }
}

function waitExit(child: ChildProcess): Promise<boolean> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(true);
    else child.once('exit', () => resolve(true));
  });
}
