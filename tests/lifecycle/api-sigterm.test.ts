/**
 * Graceful shutdown of the API: SIGTERM under load stops accepting, finishes what it took,
 * and exits 0 within API_SHUTDOWN_GRACE_MS; clients that fail over with the same Idempotency-Key lose
 * and double nothing.
 */
import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { ApiClient, roomPath, type ApiResponse } from '../harness/api-client.ts';
import { Actors } from '../harness/stacks.ts';
import { sendOnce, type Outcome } from './one-shot-http.ts';
import { sleep, startLifecycleWorld, terminate, type LifecycleWorld, type ServiceProcess, type Termination } from './service-processes.ts';

const CLIENTS = 10;
const GRACE_MS = 5000;

interface Attempt {
  node: 'A' | 'B';
  sentAt: number;
  doneAt: number;
  outcome: Outcome<MessageResponse>;
}

interface Sent {
  client: number;
  seq: number;
  key: string;
  attempts: Attempt[];
}

/** The answer of an attempt, if it got one. */
const answerOf = (a: Attempt): ApiResponse<MessageResponse> | undefined => (a.outcome.kind === 'answered' ? a.outcome.response : undefined);
const isAcknowledgement = (r: ApiResponse<MessageResponse> | undefined): r is ApiResponse<MessageResponse> => r !== undefined && (r.status === 201 || r.status === 200);
const statusOf = (a: Attempt) => (a.outcome.kind === 'answered' ? a.outcome.response.status : a.outcome.kind);

describe('lifecycle: SIGTERM to an API process under load', function () {
  this.timeout(180_000);
  let world: LifecycleWorld;
  let apiA: ServiceProcess;
  let apiB: ServiceProcess;

  before(async () => {
    world = await startLifecycleWorld();
    [apiA, apiB] = await Promise.all([world.startApi('api-a', { API_SHUTDOWN_GRACE_MS: String(GRACE_MS) }), world.startApi('api-b')]);
  });
  after(async () => {
    await world?.stop();
  });

  it('A exits 0 within the grace period, every request it took completes, and failed-over keys lose and double nothing', async () => {
    const scenario = await world.fixture.scenario();
    const actors = new Actors(world.core, scenario);
    const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const path = `${roomPath(scope)}/messages`;
    const tokens = [await actors.writer(), await actors.appendBot()];
    const contract = new ApiClient(apiB.url);

    let loadRunning = true;
    const sent: Sent[] = [];
    const attempt = async (node: 'A' | 'B', token: string, key: string, body: unknown): Promise<Attempt> => {
      const sentAt = Date.now();
      const outcome = await sendOnce<MessageResponse>(node === 'A' ? apiA.url : apiB.url, 'POST', path, { authorization: `Bearer ${token}`, 'idempotency-key': key }, body);
      return { node, sentAt, doneAt: Date.now(), outcome };
    };
    const load = Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        const token = tokens[client % tokens.length]!;
        for (let seq = 0; loadRunning; seq++) {
          const record: Sent = { client, seq, key: ulid(), attempts: [] };
          sent.push(record);
          const body = { bodyMarkdown: `client ${client} message ${seq}` };
          const first = await attempt('A', token, record.key, body);
          record.attempts.push(first);
          // Only a connection error moves a client to B, with the same key.
          if (first.outcome.kind !== 'answered') record.attempts.push(await attempt('B', token, record.key, body));
        }
      }),
    );

    await sleep(1500);
    const signalledAt = Date.now();
    let termination: Termination;
    try {
      termination = await terminate(apiA, GRACE_MS + 10_000);
      await sleep(1000);
    } finally {
      loadRunning = false;
      await load;
    }

    const a = sent.flatMap((r) => r.attempts.filter((x) => x.node === 'A'));
    const inFlightAtSignal = a.filter((x) => x.sentAt < signalledAt && x.doneAt >= signalledAt);
    const brokenOnA = sent.filter((r) => r.attempts[0]!.outcome.kind === 'broken');
    const summary = {
      requests: sent.length,
      answeredByA: a.filter((x) => x.outcome.kind === 'answered').length,
      inFlightAtSignal: inFlightAtSignal.length,
      refusedByA: a.filter((x) => x.outcome.kind === 'refused').length,
      brokenOnA: brokenOnA.length,
      failedOverToB: sent.filter((r) => r.attempts.length > 1).length,
      exit: termination,
    };
    process.stdout.write(`      ${JSON.stringify(summary)}\n`);

    expect({ code: termination.code, signal: termination.signal }, apiA.service.log).to.deep.equal({ code: 0, signal: null });
    expect(termination.elapsedMs, 'A exits within API_SHUTDOWN_GRACE_MS').to.be.at.most(GRACE_MS);
    expect(summary.refusedByA, 'the load went on past the shutdown (clients failed over)').to.be.greaterThan(0);
    expect(inFlightAtSignal.length, 'requests were in flight on A when SIGTERM arrived').to.be.greaterThan(0);

    // Everything A answered is a 201 that passes the contract: no 5xx, no 503 while draining.
    for (const answer of a.map(answerOf)) {
      if (!answer) continue;
      expect(answer.status, answer.text).to.equal(201);
      expect(contract.problems({ method: 'POST', path }, answer)).to.deep.equal([]);
    }
    // A connection cut after connecting is allowed only if A never committed the request (a
    // connection still in the listen backlog when A closed it): then B's retry is the first, a 201.
    for (const r of brokenOnA) {
      const retry = r.attempts[1]!;
      expect(statusOf(retry), `key ${r.key} was cut on A (${r.attempts[0]!.outcome.kind === 'broken' ? r.attempts[0]!.outcome.error : ''}) after A committed it`).to.equal(201);
    }

    // Every key ended acknowledged exactly once; retries gave the original.
    const acknowledgedIds = new Map<string, Sent>();
    for (const r of sent) {
      const acks = r.attempts.map(answerOf).filter(isAcknowledgement);
      expect(acks.length, `key ${r.key}: ${r.attempts.map(statusOf)}`).to.be.greaterThan(0);
      expect(acks.filter((x) => x.status === 201), `key ${r.key}: one 201`).to.have.length(1);
      expect(new Set(acks.map((x) => x.body.messageId)).size, `key ${r.key}: retries returned the original`).to.equal(1);
      for (const x of r.attempts.filter((y) => y.node === 'B')) {
        const answer = answerOf(x);
        if (answer) expect(contract.problems({ method: 'POST', path }, answer)).to.deep.equal([]);
      }
      acknowledgedIds.set(acks[0]!.body.messageId, r);
    }

    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof contract.list<MessagePageResponse>>> = await contract.list<MessagePageResponse>(scope, tokens[0]!, `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status, page.text).to.equal(200);
      listed.push(...page.body.items.map((m) => m.messageId));
      cursor = page.body.nextCursor ?? null;
    } while (cursor !== null);
    contract.close();
    expect(listed.length - new Set(listed).size, 'duplicated messages').to.equal(0);
    expect(listed.filter((id) => !acknowledgedIds.has(id)), 'unexpected messages (listed, never acknowledged)').to.deep.equal([]);
    expect([...acknowledgedIds.keys()].filter((id) => !listed.includes(id)), 'lost messages (acknowledged, not listed)').to.deep.equal([]);
  });
});
