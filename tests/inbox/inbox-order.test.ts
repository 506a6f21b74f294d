/**
 * A target's inbox follows message order within a room, however many notifiers run: three
 * standalone notifiers on one PostgreSQL and Redis, appends through two APIs, mentions appended one
 * after another, then by several writers at once, then again at once with one notifier SIGKILLed
 * mid-run while it is the only one working, so that what it had taken is recovered by the durable
 * sweep.
 */
import { expect } from 'chai';
import pg from 'pg';
import type { InboxPageResponse, MessagePageResponse, MessageResponse, NotificationResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { ApiClient, bearer, type RoomScope } from '../harness/api-client.ts';
import { startDistributedCluster, type DistributedCluster, type ServiceHandle } from './distributed-cluster.ts';

const SEQUENTIAL = 25;
const WRITERS = 6;
const PER_WRITER = 20;
/** Mentions appended one after another once the killed notifier's work has been swept. */
const SEQUENTIAL_AFTER_KILL = 10;
/** Core's answer time while the victim handles its last fanout (below the services' 2 s core timeout). */
const CORE_LATENCY_MS = 1200;

const NOTIFIER_ENV = {
  // The killed member's backbone entries are never handed to another member during the run: what it
  // had read or claimed comes back through the durable fanout table only.
  NOTIFIER_CLAIM_IDLE_MS: '600000',
  NOTIFIER_LEASE_MS: '2000',
  NOTIFIER_SWEEP_INTERVAL_MS: '200',
  NOTIFIER_SWEEP_GRACE_MS: '1000',
  NOTIFIER_RETRY_DELAY_MS: '200',
};

interface Author {
  kind: 'user' | 'bot';
  token: string;
  coreResource?: string;
}

/** One repository: a human writer, an appending bot, a human target and a bot target. */
function buildWorld() {
  const s = ulid().slice(-8).toLowerCase();
  const repositoryId = ulid();
  const writer = `u_writer_${s}`;
  const human = `u_target_${s}`;
  const bot = `b_target_${s}`;
  const appender = { id: `b_appender_${s}`, credentialId: `c_appender_${s}` };
  const grant = (id: string, capabilities: Array<'room:read' | 'message:append'>) => ({
    id,
    repositoryId,
    subject: { kind: 'organization', id: `o_${s}` },
    capabilities,
    state: 'active',
  });
  const fixture = {
    users: [{ id: writer }, { id: human }],
    organizations: [{ id: `o_${s}` }],
    repositories: [{ id: repositoryId, state: 'active', branches: [], members: { [writer]: 'write', [human]: 'read' } }],
    bots: [
      { id: appender.id, credentials: [{ id: appender.credentialId, state: 'active' }], grants: [grant(`g_append_${s}`, ['room:read', 'message:append'])] },
      { id: bot, credentials: [{ id: `c_${bot}`, state: 'active' }], grants: [grant(`g_read_${s}`, ['room:read'])] },
    ],
  };
  return { repositoryId, writer, human, bot, appender, fixture };
}

/** A body mentioning the human target, and the bot target too when `both`. */
function mentionBody(label: string, human: string, bot: string, both: boolean) {
  let body = `${label}: @${human}`;
  const mentions: Array<{ principalKind: 'human' | 'bot'; principalId: string; startByte: number; endByte: number }> = [
    { principalKind: 'human', principalId: human, startByte: Buffer.byteLength(`${label}: `), endByte: Buffer.byteLength(body) },
  ];
  if (both) {
    body += ' and ';
    const startByte = Buffer.byteLength(body);
    body += `@${bot}`;
    mentions.push({ principalKind: 'bot', principalId: bot, startByte, endByte: Buffer.byteLength(body) });
  }
  return { bodyMarkdown: body, mentions };
}

/** Sum of a counter's samples whose labels include `labels`, from a Prometheus text page. */
async function counterSum(notifier: ServiceHandle, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${notifier.adminUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

async function listInbox(api: ApiClient, repositoryId: string, token: string): Promise<NotificationResponse[]> {
  const items: NotificationResponse[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api.send<InboxPageResponse>({ method: 'GET', path: `/v1/repositories/${repositoryId}/inbox?${query}`, headers: bearer(token) });
    expect(page.status, page.text).to.equal(200);
    items.push(...page.body.items);
    cursor = page.body.nextCursor ?? null;
  } while (cursor !== null);
  return items;
}

async function listRoom(api: ApiClient, scope: RoomScope, token: string): Promise<MessageResponse[]> {
  const items: MessageResponse[] = [];
  for (let cursor: string | null = null; ; ) {
    const query: string = `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api.list<MessagePageResponse>(scope, token, query);
    expect(page.status, page.text).to.equal(200);
    items.push(...(page.body.items as MessageResponse[]));
    cursor = page.body.nextCursor ?? null;
    if (page.body.items.length < 200 || cursor === null) return items;
  }
}

/** Positions where a notification's message comes before the previous notification's message in the room. */
function inversions(inboxMessageIds: string[], roomPosition: Map<string, number>): number {
  let count = 0;
  for (let i = 1; i < inboxMessageIds.length; i++) {
    if ((roomPosition.get(inboxMessageIds[i]!) ?? -1) < (roomPosition.get(inboxMessageIds[i - 1]!) ?? -1)) count++;
  }
  return count;
}

describe('inbox order: 3 notifier processes, mentions appended in sequence and at once, one notifier SIGKILLed', function () {
  this.timeout(300_000);
  let cluster: DistributedCluster;

  before(async () => {
    cluster = await startDistributedCluster({ apis: 2, gateways: 0, notifiers: 3, env: { api: { APPEND_RATE_LIMIT: '1000000' }, notifier: NOTIFIER_ENV } });
  });
  after(async () => {
    for (const n of cluster?.notifiers ?? []) if (!n.service.hasExited) n.service.process.kill('SIGCONT');
    await cluster?.stop();
  });

  it('lists every target\'s notifications in exactly the room\'s message order, none lost or doubled, after the sweep took over', async () => {
    const world = buildWorld();
    await cluster.core.putFixture(world.fixture);
    const mint = (request: Parameters<DistributedCluster['core']['mintToken']>[0]) => cluster.core.mintToken({ expiresInSeconds: 3600, ...request });
    const authors: Author[] = [
      { kind: 'user', token: await mint({ type: 'human', subjectId: world.writer }), coreResource: `Bearer ${await mint({ type: 'core_resource', subjectId: world.writer })}` },
      { kind: 'bot', token: await mint({ type: 'bot', subjectId: world.appender.id, credentialId: world.appender.credentialId }) },
    ];
    const humanToken = await mint({ type: 'human', subjectId: world.human });
    const botToken = await mint({ type: 'bot', subjectId: world.bot, credentialId: `c_${world.bot}` });
    const apis = cluster.apis.map((a) => new ApiClient(a.url));
    const scope: RoomScope = { repositoryId: world.repositoryId };
    let sent = 0;
    const append = async (label: string) => {
      const n = sent++;
      const author = authors[n % authors.length]!;
      const response = await apis[n % apis.length]!.append<MessageResponse>(
        scope,
        author.token,
        mentionBody(label, world.human, world.bot, n % 3 !== 0),
        author.coreResource ? { coreAuthorization: author.coreResource } : {},
      );
      expect(response.status, response.text).to.equal(201);
      return response.body;
    };

    // One after another: each append waits for the previous 201.
    for (let i = 0; i < SEQUENTIAL; i++) await append(`sequential ${i}`);
    // At once, all three notifiers racing.
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < PER_WRITER / 2; i++) await append(`racing writer ${w} #${i}`);
      }),
    );

    // At once, with one notifier doing all the work: the other two are paused.
    const [victim, ...survivors] = cluster.notifiers as [ServiceHandle, ...ServiceHandle[]];
    const sweeperFanouts = async () =>
      (await Promise.all(survivors.map((s) => counterSum(s, 'chat_notifier_fanouts_total', 'path="sweeper"')))).reduce((a, b) => a + b, 0);
    const database = new pg.Client({ connectionString: cluster.databaseUrl });
    await database.connect();
    /** Polls the pending fanout rows (core's slow answer leaves the victim 1.2 s per claim) until `done`. */
    const untilFanouts = async (what: string, done: (rows: Array<{ message_id: string; attempts: number }>) => boolean) => {
      for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 20))) {
        const { rows } = await database.query<{ message_id: string; attempts: number }>('SELECT message_id, attempts FROM mention_fanout WHERE NOT dead');
        if (done(rows)) return;
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(rows)}`);
      }
    };
    // Paused only once idle: a notifier stopped inside its write transaction would hold the inbox
    // locks the victim needs.
    await untilFanouts('the racing mentions are fanned out', (rows) => rows.length === 0);
    for (const s of survivors) s.service.process.kill('SIGSTOP');
    try {
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; i < PER_WRITER; i++) await append(`writer ${w} #${i}`);
        }),
      );
      // One more mention, with core answering slowly: the victim reads its event and claims its
      // fanout row, and dies while it waits on core. Its backbone entry is never handed to another
      // notifier (NOTIFIER_CLAIM_IDLE_MS is long) and no later event of the room leads one to the
      // row, so only the durable sweep can run it, once the victim's claim has lapsed. The kill
      // waits until the row is claimed: killed earlier, the victim would leave the event unread and
      // a survivor would read it off the backbone instead.
      await untilFanouts('the victim has run every earlier fanout', (rows) => rows.length === 0);
      await cluster.core.setFaults('slow', CORE_LATENCY_MS);
      const held = await append('held by the killed notifier');
      await untilFanouts('the victim has claimed the held mention\'s fanout', (rows) => rows.some((r) => r.message_id === held.messageId && r.attempts > 0));
    } finally {
      victim.service.process.kill('SIGKILL');
      await cluster.core.setFaults('ok');
      for (const s of survivors) s.service.process.kill('SIGCONT');
      await database.end();
    }
    const sweepDeadline = Date.now() + 30_000;
    while ((await sweeperFanouts()) === 0 && Date.now() < sweepDeadline) await new Promise((r) => setTimeout(r, 200));
    // The run goes on with the survivors.
    for (let i = 0; i < SEQUENTIAL_AFTER_KILL; i++) await append(`after the kill ${i}`);

    const reader = authors[0]!.token;
    const room = await listRoom(apis[0]!, scope, reader);
    expect(room).to.have.length(sent);
    const position = new Map(room.map((m, i) => [m.messageId, i]));
    const expectedFor = (kind: 'human' | 'bot', id: string) =>
      room.filter((m) => (m.mentions ?? []).some((b) => b.principalKind === kind && b.principalId === id)).map((m) => m.messageId);
    const targets = [
      { name: 'human', token: humanToken, expected: expectedFor('human', world.human) },
      { name: 'bot', token: botToken, expected: expectedFor('bot', world.bot) },
    ];

    const inboxes = new Map<string, string[]>();
    const deadline = Date.now() + 120_000;
    for (const target of targets) {
      let items: NotificationResponse[] = [];
      for (let attempt = 0; ; attempt++) {
        items = await listInbox(apis[attempt % apis.length]!, world.repositoryId, target.token);
        if (items.length >= target.expected.length || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      inboxes.set(target.name, items.map((n) => n.messageId));
    }
    // A little longer, so a late duplicate would show.
    await new Promise((r) => setTimeout(r, 2000));
    for (const target of targets) inboxes.set(target.name, (await listInbox(apis[1]!, world.repositoryId, target.token)).map((n) => n.messageId));

    const sweptFanouts = await sweeperFanouts();
    const report = targets.map((target) => {
      const got = inboxes.get(target.name)!;
      const want = new Set(target.expected);
      return {
        target: target.name,
        expected: target.expected.length,
        listed: got.length,
        lost: target.expected.filter((id) => !got.includes(id)).length,
        duplicated: got.length - new Set(got).size,
        unexpected: got.filter((id) => !want.has(id)).length,
        inversions: inversions(got, position),
        inversionsInSequentialPart: inversions(got.filter((id) => position.get(id)! < SEQUENTIAL), position),
      };
    });
    process.stdout.write(`      [inbox order] ${JSON.stringify({ messages: sent, sweptFanouts, report })}\n`);

    expect(victim.service.hasExited, 'the killed notifier is gone').to.equal(true);
    for (const [i, target] of targets.entries()) {
      expect(report[i], `${target.name} inbox`).to.deep.include({ lost: 0, duplicated: 0, unexpected: 0, inversions: 0 });
      expect(inboxes.get(target.name), `${target.name} inbox in message order`).to.deep.equal(target.expected);
    }
    expect(sweptFanouts, 'fanouts run by the surviving notifiers\' durable sweep').to.be.greaterThan(0);
    for (const api of apis) api.close();
  });
});
