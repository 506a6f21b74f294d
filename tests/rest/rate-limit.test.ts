import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import type { ApiClient } from '../harness/api-client.ts';
import type { DevCoreClient } from '../harness/dev-core-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import type { Actors } from '../harness/stacks.ts';
import { startStack, type Stack } from '../harness/stacks.ts';
import type { Scenario } from '../harness/fixture-factory.ts';

const LIMIT = 3;
const WINDOW_SECONDS = 2;
const RATE_ENV = { APPEND_RATE_LIMIT: String(LIMIT), APPEND_RATE_WINDOW_SECONDS: String(WINDOW_SECONDS) };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Windows are aligned to multiples of their length; start a test just after a boundary so it fits in one. */
async function atWindowStart(): Promise<void> {
  const windowMs = WINDOW_SECONDS * 1000;
  const into = Date.now() % windowMs;
  if (into > 100) await sleep(windowMs - into + 30);
}

interface Target {
  nodes: ApiClient[];
  core: DevCoreClient;
  scenario(): Promise<{ scenario: Scenario; actors: Actors }>;
}

function rateLimitRules(label: string, target: () => Target) {
  /** Round-robin over the processes, so a shared window is needed to hold the limit. */
  let turn = 0;
  const node = () => {
    const nodes = target().nodes;
    return nodes[turn++ % nodes.length]!;
  };

  it(`[${label}] section 8 / append: past the limit an append gets 429 RATE_LIMITED with an integer Retry-After`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    await atWindowStart();
    for (let i = 0; i < LIMIT; i++) expectStatus(await node().append(scope, token, { bodyMarkdown: `m${i}` }), 201);
    const limited = await node().append(scope, token, { bodyMarkdown: 'one too many' });
    expectError(limited, 429, 'RATE_LIMITED');
    const retryAfter = String(limited.headers['retry-after']);
    expect(retryAfter).to.match(/^[0-9]+$/);
    expect(Number(retryAfter)).to.be.within(1, WINDOW_SECONDS);
  });

  it(`[${label}] section 8: the limit comes before mention resolution: probes of who may read the room count against it, and a limited append costs core nothing`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    const coreAuthorization = `Bearer ${await actors.coreResource()}`;
    const probe = (principalKind: 'human' | 'bot', principalId: string) => {
      const body = `hi @${principalId}`;
      return { bodyMarkdown: body, mentions: [{ principalKind, principalId, startByte: 3, endByte: Buffer.byteLength(body) }] };
    };
    await atWindowStart();
    const before = await target().core.calls();
    // Every probe core answers takes a unit, though nothing is appended. (Refused targets only, so
    // no notifier asks core about a notification while the calls are counted.)
    for (const [kind, id] of [['human', scenario.users.outsider], ['human', 'u_nobody_at_all'], ['bot', 'b_no_such_bot']] as const) {
      expectError(await node().append(scope, token, probe(kind, id), { coreAuthorization }), 400, 'MENTION_TARGET_INVALID');
    }
    const asked = await target().core.calls();
    expect(asked.resolveMentions - before.resolveMentions).to.equal(LIMIT);
    expectError(await node().append(scope, token, probe('human', scenario.users.outsider), { coreAuthorization }), 429, 'RATE_LIMITED');
    expectError(await node().append(scope, token, probe('human', scenario.users.reader), { coreAuthorization }), 429, 'RATE_LIMITED');
    expect((await target().core.calls()).resolveMentions).to.equal(asked.resolveMentions);
  });

  it(`[${label}] section 4 append rule 3: an exact retry of an append with mentions takes no unit and is answered while limited`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    const coreAuthorization = `Bearer ${await actors.coreResource()}`;
    const body = `hi @${scenario.users.reader}`;
    const mentioning = { bodyMarkdown: body, mentions: [{ principalKind: 'human', principalId: scenario.users.reader, startByte: 3, endByte: Buffer.byteLength(body) }] };
    const key = ulid();
    await atWindowStart();
    const first = await node().append<MessageResponse>(scope, token, mentioning, { key, coreAuthorization });
    expectStatus(first, 201);
    const retry = await node().append<MessageResponse>(scope, token, mentioning, { key, coreAuthorization });
    expectStatus(retry, 200);
    expect(retry.body).to.deep.equal(first.body);
    for (let i = 1; i < LIMIT; i++) expectStatus(await node().append(scope, token, { bodyMarkdown: `plain ${i}` }), 201);
    expectError(await node().append(scope, token, { bodyMarkdown: 'over' }), 429, 'RATE_LIMITED');
    expectStatus(await node().append(scope, token, mentioning, { key, coreAuthorization }), 200);
  });

  it(`[${label}] section 4 append rule 9: a retry after 429 with the same key succeeds once the window has passed`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.appendBot();
    const keys = Array.from({ length: LIMIT }, () => ulid());
    await atWindowStart();
    for (const [i, key] of keys.entries()) expectStatus(await node().append(scope, token, { bodyMarkdown: `m${i}` }, { key }), 201);
    const key = ulid();
    const limited = await node().append(scope, token, { bodyMarkdown: 'later' }, { key });
    expectError(limited, 429, 'RATE_LIMITED');
    // While limited, an exact retry of an accepted message still gets the original.
    expectStatus(await node().append(scope, token, { bodyMarkdown: 'm0' }, { key: keys[0]! }), 200);
    await sleep(Number(limited.headers['retry-after']) * 1000 + 50);
    const retried = await node().append<MessageResponse>(scope, token, { bodyMarkdown: 'later' }, { key });
    expectStatus(retried, 201);
    expect(retried.body.idempotencyKey).to.equal(key);
    const list = await node().list<MessagePageResponse>(scope, token);
    expect(list.body.items.map((m) => m.bodyMarkdown)).to.deep.equal(['m0', 'm1', 'm2', 'later']);
  });

  it(`[${label}] section 4 append rule 3: an exact retry consumes no rate capacity`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const token = await actors.writer();
    const first = ulid();
    await atWindowStart();
    expectStatus(await node().append(scope, token, { bodyMarkdown: 'first' }, { key: first }), 201);
    for (let i = 0; i < 2 * LIMIT; i++) expectStatus(await node().append(scope, token, { bodyMarkdown: 'first' }, { key: first }), 200);
    for (let i = 1; i < LIMIT; i++) expectStatus(await node().append(scope, token, { bodyMarkdown: `next ${i}` }), 201);
    expectError(await node().append(scope, token, { bodyMarkdown: 'over' }), 429, 'RATE_LIMITED');
  });

  it(`[${label}] section 4 append rule 3: racing retries near the limit all get 200 and leave the budget as it was`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    const key = ulid();
    await atWindowStart();
    expectStatus(await node().append(scope, token, { bodyMarkdown: 'original' }, { key }), 201);
    expectStatus(await node().append(scope, token, { bodyMarkdown: 'second' }), 201);
    // One unit left: the retries race for it; the ones that take it give it back, the ones refused are looked up.
    const retries = await Promise.all(Array.from({ length: 12 }, () => node().append<MessageResponse>(scope, token, { bodyMarkdown: 'original' }, { key })));
    for (const retry of retries) {
      expectStatus(retry, 200);
      expect(retry.body.bodyMarkdown).to.equal('original');
    }
    expectStatus(await node().append(scope, token, { bodyMarkdown: 'third' }), 201);
    expectError(await node().append(scope, token, { bodyMarkdown: 'over' }), 429, 'RATE_LIMITED');
  });

  it(`[${label}] section 8: a refused core resource credential (401 CORE_RESOURCE_TOKEN_REJECTED) consumes no rate capacity`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    const body = `hi @${scenario.users.reader}`;
    const mention = { bodyMarkdown: body, mentions: [{ principalKind: 'human' as const, principalId: scenario.users.reader, startByte: 3, endByte: Buffer.byteLength(body) }] };
    const refused = [
      await target().core.mintToken({ type: 'core_resource', subjectId: scenario.users.writer, expiresInSeconds: -60 }),
      // Valid, but another person's: core refuses to lend it to this author.
      await target().core.mintToken({ type: 'core_resource', subjectId: scenario.users.reader }),
    ];
    await atWindowStart();
    for (let i = 0; i <= LIMIT; i++) {
      expectError(await node().append(scope, token, mention, { coreAuthorization: `Bearer ${refused[i % 2]}` }), 401, 'CORE_RESOURCE_TOKEN_REJECTED');
    }
    const coreAuthorization = `Bearer ${await actors.coreResource()}`;
    for (let i = 0; i < LIMIT; i++) expectStatus(await node().append(scope, token, mention, { coreAuthorization }), 201);
    expectError(await node().append(scope, token, mention, { coreAuthorization }), 429, 'RATE_LIMITED');
  });

  it(`[${label}] section 8: refused appends (400, 409) consume no rate capacity either`, async () => {
    const { scenario, actors } = await target().scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    const key = ulid();
    await atWindowStart();
    expectStatus(await node().append(scope, token, { bodyMarkdown: 'kept' }, { key }), 201);
    for (let i = 0; i < LIMIT; i++) {
      expectError(await node().append(scope, token, { bodyMarkdown: '' }), 400, 'MESSAGE_INVALID');
      expectError(await node().append(scope, token, { bodyMarkdown: 'other' }, { key }), 409, 'IDEMPOTENCY_KEY_REUSED');
    }
    for (let i = 1; i < LIMIT; i++) expectStatus(await node().append(scope, token, { bodyMarkdown: `ok ${i}` }), 201);
  });
}

describe('append rate limit (APPEND_RATE_LIMIT=3, APPEND_RATE_WINDOW_SECONDS=2)', function () {
  this.timeout(60_000);

  describe('embedded, one process', () => {
    let stack: Stack;
    before(async () => {
      stack = await startStack('embedded', RATE_ENV);
    });
    after(async () => {
      await stack?.stop();
    });
    rateLimitRules('embedded', () => ({ nodes: [stack.api], core: stack.core, scenario: () => stack.scenario() }));
  });

  describe('postgres + redis, two processes sharing one window', () => {
    let cluster: Cluster;
    before(async () => {
      cluster = await startCluster(2, RATE_ENV);
    });
    after(async () => {
      await cluster?.stop();
    });
    rateLimitRules('postgres, 2 processes', () => ({ nodes: cluster.nodes, core: cluster.core, scenario: () => cluster.scenario() }));
  });
});
