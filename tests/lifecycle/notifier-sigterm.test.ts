/**
 * Graceful shutdown of a notifier: SIGTERM mid-run stops consuming, settles or returns the
 * work in hand and exits 0; with a second notifier running, every mention still ends as exactly one
 * notification in its target's inbox.
 */
import { expect } from 'chai';
import type { InboxPageResponse, MessageResponse } from '@chat/contracts';
import { ApiClient } from '../harness/api-client.ts';
import { Actors } from '../harness/stacks.ts';
import { eventually, sleep, startLifecycleWorld, terminate, type LifecycleWorld, type ServiceProcess, type Termination } from './service-processes.ts';

const WRITERS = 4;
const NOTIFIER_ENV = {
  NOTIFIER_CLAIM_IDLE_MS: '2000',
  NOTIFIER_LEASE_MS: '3000',
  NOTIFIER_SWEEP_INTERVAL_MS: '200',
  NOTIFIER_SWEEP_GRACE_MS: '2000',
  NOTIFIER_RETRY_DELAY_MS: '200',
};

/** Byte span of `mention` inside `body`. */
const spanOf = (body: string, mention: string) => {
  const start = Buffer.byteLength(body.slice(0, body.indexOf(mention)), 'utf8');
  return { startByte: start, endByte: start + Buffer.byteLength(mention, 'utf8') };
};

/** Sum of a counter over all its label sets, read from a Prometheus text page. */
async function counterTotal(adminUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Every notification in one principal's inbox of a repository, through the validating client. */
async function readInbox(api: ApiClient, repositoryId: string, token: string): Promise<InboxPageResponse['items']> {
  const items: InboxPageResponse['items'] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<typeof api.send<InboxPageResponse>>> = await api.send<InboxPageResponse>({
      method: 'GET',
      path: `/v1/repositories/${repositoryId}/inbox?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      headers: { authorization: `Bearer ${token}` },
    });
    if (page.status !== 200) throw new Error(`inbox answered ${page.status}: ${page.text}`);
    items.push(...page.body.items);
    cursor = page.body.nextCursor ?? null;
  } while (cursor !== null);
  return items;
}

describe('lifecycle: SIGTERM to a notifier mid-run', function () {
  this.timeout(180_000);
  let world: LifecycleWorld;
  let api: ServiceProcess;
  let notifierA: ServiceProcess;

  before(async () => {
    world = await startLifecycleWorld();
    api = await world.startApi('api');
    [notifierA] = await Promise.all([world.startNotifier('notifier-a', NOTIFIER_ENV), world.startNotifier('notifier-b', NOTIFIER_ENV)]);
  });
  after(async () => {
    await world?.stop();
  });

  it('the stopped notifier exits 0 and every mention ends as exactly one notification in its target\'s inbox', async () => {
    const scenario = await world.fixture.scenario();
    const actors = new Actors(world.core, scenario);
    // Two rooms: a room's fanouts run one at a time on whichever notifier holds its earliest
    // pending row, so with one busy room the other notifier could have nothing to do when signalled.
    const scopes = [{ repositoryId: scenario.repositoryId, branchId: scenario.branchId }, { repositoryId: scenario.repositoryId }];
    const client = new ApiClient(api.url);
    const humanTarget = scenario.users.reader;
    const botTarget = scenario.bots.reader.id;
    const writerToken = await actors.writer();
    const coreResource = `Bearer ${await actors.coreResource()}`;
    const botToken = await actors.appendBot();

    let writing = true;
    const appended: MessageResponse[] = [];
    const writers = Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let seq = 0; writing; seq++) {
          const body = `writer ${w} #${seq} for @${humanTarget} and @${botTarget}`;
          const mentions = [
            { principalKind: 'human', principalId: humanTarget, ...spanOf(body, `@${humanTarget}`) },
            { principalKind: 'bot', principalId: botTarget, ...spanOf(body, `@${botTarget}`) },
          ];
          // Humans and bots both write: a human's mentions need the core resource credential.
          const answer =
            w % 2 === 0
              ? await client.append<MessageResponse>(scopes[(w >> 1) % 2]!, writerToken, { bodyMarkdown: body, mentions }, { coreAuthorization: coreResource })
              : await client.append<MessageResponse>(scopes[(w >> 1) % 2]!, botToken, { bodyMarkdown: body, mentions });
          expect(answer.status, answer.text).to.equal(201);
          appended.push(answer.body);
          await sleep(10);
        }
      }),
    );

    let termination: Termination;
    let fanoutsBeforeSignal = 0;
    try {
      await eventually('notifier A to fan out some mentions', async () => (fanoutsBeforeSignal = await counterTotal(notifierA.adminUrl, 'chat_notifier_fanouts_total')) >= 5, 30_000);
      termination = await terminate(notifierA);
      await sleep(1500);
    } finally {
      writing = false;
      await writers;
    }

    const inboxes = { human: await actors.reader(), bot: await actors.readBot() };
    const expected = new Set(appended.map((m) => m.messageId));
    const read = async () => ({ human: await readInbox(client, scenario.repositoryId, inboxes.human), bot: await readInbox(client, scenario.repositoryId, inboxes.bot) });
    let last = await read();
    await eventually(
      'every mention to reach its inbox',
      async () => {
        last = await read();
        return last.human.length >= expected.size && last.bot.length >= expected.size;
      },
      60_000,
      500,
    ).catch(() => undefined); // the assertions below say what is missing
    // A little longer, so a late duplicate would show.
    await sleep(2500);
    last = await read();
    client.close();

    const counts = (items: InboxPageResponse['items']) => {
      const perMessage = new Map<string, number>();
      for (const n of items) perMessage.set(n.messageId, (perMessage.get(n.messageId) ?? 0) + 1);
      return {
        lost: [...expected].filter((id) => !perMessage.has(id)).length,
        doubled: [...perMessage.values()].filter((c) => c > 1).length,
        unexpected: [...perMessage.keys()].filter((id) => !expected.has(id)).length,
      };
    };
    const report = { messages: expected.size, fanoutsByABeforeSignal: fanoutsBeforeSignal, human: counts(last.human), bot: counts(last.bot), exit: termination };
    process.stdout.write(`      [notifier SIGTERM] ${JSON.stringify(report)}\n`);

    expect({ code: termination.code, signal: termination.signal }, notifierA.service.log).to.deep.equal({ code: 0, signal: null });
    expect(report.human, 'human target inbox').to.deep.equal({ lost: 0, doubled: 0, unexpected: 0 });
    expect(report.bot, 'bot target inbox').to.deep.equal({ lost: 0, doubled: 0, unexpected: 0 });
    const branchOf = new Map(appended.map((m) => [m.messageId, m.branchId ?? null]));
    for (const n of last.human) {
      expect(n).to.include({ targetKind: 'human', targetId: humanTarget, repositoryId: scenario.repositoryId });
      expect(n.branchId ?? null).to.equal(branchOf.get(n.messageId));
    }
    for (const n of last.bot) expect(n).to.include({ targetKind: 'bot', targetId: botTarget, repositoryId: scenario.repositoryId });
  });
});
