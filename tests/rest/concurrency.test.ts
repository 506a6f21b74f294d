import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse, RoomResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import type { ApiResponse } from '../harness/api-client.ts';
import { compareMessages } from '../harness/assertions.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { testConfig } from '../harness/test-config.ts';
import { seededRandom } from '../harness/seeded-random.ts';

const PROCESSES = 4;
const CLIENTS = 40;
const MESSAGES_PER_CLIENT = 8;

interface Sent {
  client: number;
  seq: number;
  key: string;
  answers: Array<ApiResponse<MessageResponse>>;
}

describe(`concurrency: ${PROCESSES} processes on one PostgreSQL + Redis, ${CLIENTS} clients appending to one room`, function () {
  this.timeout(180_000);
  let cluster: Cluster;

  before(async () => {
    cluster = await startCluster(PROCESSES, { APPEND_RATE_LIMIT: '1000000' });
  });
  after(async () => {
    await cluster?.stop();
  });

  it('invariants 1 and 3: every accepted message is listed exactly once, in each client\'s order, every retry got the original with 200, and list order is (createdAt, messageId) order', async () => {
    const seed = testConfig.concurrencySeed;
    const random = seededRandom(seed);
    const context = `seed ${seed} (rerun with CONCURRENCY_SEED=${seed})`;
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const tokens = [await actors.writer(), await actors.appendBot()];
    const node = () => cluster.nodes[Math.floor(random() * cluster.nodes.length)]!;
    // Choices are drawn up front, so the seed alone decides them whatever the timing.
    const plans = Array.from({ length: CLIENTS }, () =>
      Array.from({ length: MESSAGES_PER_CLIENT }, () => ({ copies: random() < 0.3 ? 2 + Math.floor(random() * 3) : 1, later: random() < 0.3, pause: Math.floor(random() * 5) })),
    );
    const nodePlan = Array.from({ length: CLIENTS * MESSAGES_PER_CLIENT * 8 }, () => node());
    let nodeTurn = 0;
    const nextNode = () => nodePlan[nodeTurn++ % nodePlan.length]!;

    // A real client retries a 503 (core or store briefly unavailable under load) with the same key.
    const append = async (body: { bodyMarkdown: string }, token: string, key: string) => {
      for (let attempt = 0; ; attempt++) {
        const answer = await nextNode().append<MessageResponse>(scope, token, body, { key });
        if (answer.status !== 503 || attempt >= 20) return answer;
        await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
      }
    };
    const sent: Sent[] = [];
    await Promise.all(
      plans.map(async (plan, client) => {
        const token = tokens[client % 2]!;
        for (const [seq, step] of plan.entries()) {
          const record: Sent = { client, seq, key: ulid(), answers: [] };
          sent.push(record);
          const body = { bodyMarkdown: `client ${client} message ${seq}` };
          // Concurrent copies of one request through different processes.
          record.answers.push(...(await Promise.all(Array.from({ length: step.copies }, () => append(body, token, record.key)))));
          await new Promise((r) => setTimeout(r, step.pause));
          if (step.later) record.answers.push(await append(body, token, record.key));
        }
      }),
    );

    const accepted = new Map<string, Sent>();
    for (const record of sent) {
      const statuses = record.answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 201), `${context}: one 201 per key, got ${statuses}`).to.have.length(1);
      expect(statuses.filter((s) => s !== 201 && s !== 200), `${context}: ${statuses}`).to.deep.equal([]);
      const ids = new Set(record.answers.map((a) => a.body.messageId));
      expect(ids.size, `${context}: every retry got the original`).to.equal(1);
      const original = record.answers.find((a) => a.status === 201)!.body;
      for (const a of record.answers) expect(a.body, context).to.deep.equal(original);
      accepted.set(original.messageId, record);
    }
    expect(accepted.size).to.equal(CLIENTS * MESSAGES_PER_CLIENT);

    // Page through the room from random processes.
    const listed: MessageResponse[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=${1 + Math.floor(random() * 200)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await node().list<MessagePageResponse>(scope, tokens[0]!, query);
      expect(page.status, page.text).to.equal(200);
      listed.push(...page.body.items);
      cursor = page.body.nextCursor ?? null;
    } while (cursor !== null);

    const listedIds = listed.map((m) => m.messageId);
    expect(new Set(listedIds).size, `${context}: no duplicates`).to.equal(listedIds.length);
    expect([...listedIds].sort(), `${context}: exactly the accepted messages`).to.deep.equal([...accepted.keys()].sort());
    const lastSeq = new Map<number, number>();
    for (const m of listed) {
      const record = accepted.get(m.messageId)!;
      expect(record.seq, `${context}: client ${record.client} order`).to.be.greaterThan(lastSeq.get(record.client) ?? -1);
      lastSeq.set(record.client, record.seq);
    }
    expect([...listed].sort(compareMessages).map((m) => m.messageId), `${context}: (createdAt, messageId) order`).to.deep.equal(listedIds);
    const room = await node().getRoom<RoomResponse>(scope, tokens[0]!);
    expect(room.body.messageCount).to.equal(listed.length);
  });
});
