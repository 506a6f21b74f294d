import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { ApiClient, errorCode, roomPath, type RoomScope } from '../harness/api-client.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { RedisInstance } from '../harness/redis-instance.ts';
import { checkDeliveries, expectClean, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import { ResumingSseClient } from '../harness/sse-resuming-client.ts';
import { openSse, refusalAsApiResponse, type SseConnection } from '../harness/sse-stream.ts';
import { seededRandom } from '../harness/seeded-random.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Only checks answers against the contract; it sends nothing. */
const validator = new ApiClient('http://127.0.0.1:1');

interface Attempt {
  body: string;
  status: number | 'network error';
  message?: MessageResponse;
}

/** Appends with several writers until `until()` is true; every attempt is recorded with its answer. */
async function appendWhile(cluster: GatewayCluster, scope: RoomScope, token: string, label: string, until: () => boolean): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  await Promise.all(
    Array.from({ length: 3 }, async (_, w) => {
      for (let i = 0; !until(); i += 1) {
        const body = `${label} writer ${w} #${i}`;
        const answer = await cluster.apiClients[0]!.append<MessageResponse>(scope, token, { bodyMarkdown: body }, { key: ulid() }).catch(() => undefined);
        attempts.push(answer === undefined ? { body, status: 'network error' } : { body, status: answer.status, message: answer.body });
        await sleep(20);
      }
    }),
  );
  return attempts;
}

function tally(attempts: Attempt[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of attempts) counts[String(a.status)] = (counts[String(a.status)] ?? 0) + 1;
  return counts;
}

describe('streams: Redis paused (SIGSTOP) and restarted empty, with 1 API and 1 gateway on a private redis-server (reliability test 4)', function () {
  this.timeout(120_000);
  let redis: RedisInstance;
  let cluster: GatewayCluster;
  const clients: ResumingSseClient[] = [];

  before(async () => {
    redis = await RedisInstance.start();
    cluster = await startGatewayCluster({ apis: 1, gateways: 1, redisUrl: redis.url, gatewayEnv: { GATEWAY_HEARTBEAT_MS: '1000' } });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await cluster?.stop();
    await redis?.stop();
  });

  async function streamAndCheck(label: string, run: (scope: RoomScope, token: string) => Promise<Attempt[]>): Promise<void> {
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const writer = await actors.writer();
    const client = new ResumingSseClient({ pickBase: () => cluster.gateways[0]!.url, path: `${roomPath(scope)}/events`, token: await actors.reader(), random: seededRandom(11), backoffMs: [50, 1000] });
    clients.push(client);
    client.start();
    const attempts = await run(scope, writer);

    const counts = tally(attempts);
    const committed = attempts.filter((a) => a.status === 201 || a.status === 200);
    expect(attempts.filter((a) => a.status !== 201 && a.status !== 200 && a.status !== 503), `${label}: every append answered 201/200 or 503 (${JSON.stringify(counts)})`).to.deep.equal([]);
    const history = await readRoomHistory(cluster.apiClients[0]!, scope, writer);
    const listedBodies = new Set(history.map((m) => m.bodyMarkdown));
    expect(committed.filter((a) => !listedBodies.has(a.body)), `${label}: acknowledged then lost`).to.deep.equal([]);
    const attemptedBodies = new Set(attempts.map((a) => a.body));
    expect(history.filter((m) => !attemptedBodies.has(m.bodyMarkdown)), `${label}: listed but never sent`).to.deep.equal([]);

    // The backlog drains: the stream catches up with everything committed.
    const deadline = Date.now() + 30_000;
    const caughtUp = () => new Set(client.received.map((r) => (JSON.parse(r.data) as MessageResponse).messageId)).size >= history.length;
    while (!caughtUp() && Date.now() < deadline) await sleep(100);
    const drainedAfterMs = 30_000 - (deadline - Date.now());
    await client.stop();
    const report = checkDeliveries(history, client.received);
    printReport(label, { ...counts, committed: committed.length, listed: history.length, lost: report.lost, duplicated: report.duplicated, replayed: report.replayed, unexpected: report.unexpected, reordered: report.reordered, connections: client.connections, drainedAfterMs });
    expect(client.fatal, label).to.deep.equal([]);
    expectClean(report);
  }

  it('SIGSTOP during appends, then SIGCONT: every append 201 (an append does not wait for Redis), the API and the gateway stay ready (the gateway degraded, naming Redis), every committed message reaches the stream once Redis is back', async () => {
    let attempts: Attempt[] = [];
    const readiness: Array<{ api: number; gateway: number; gatewayStatus: unknown }> = [];
    await streamAndCheck('redis paused', async (scope, token) => {
      let done = false;
      const writing = appendWhile(cluster, scope, token, 'pause', () => done);
      await sleep(1000);
      redis.pause();
      try {
        await sleep(3000);
        const ready = async (url: string) => {
          const answer = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) });
          return { code: answer.status, body: (await answer.json()) as { status: string; checks: Record<string, string> } };
        };
        const [api, gateway] = [await ready(cluster.apis[0]!.adminUrl), await ready(cluster.gateways[0]!.adminUrl)];
        readiness.push({ api: api.code, gateway: gateway.code, gatewayStatus: { status: gateway.body.status, redis: gateway.body.checks.redis !== 'ok' } });
        await sleep(1000);
      } finally {
        redis.resume();
      }
      await sleep(1500);
      done = true;
      attempts = await writing;
      return attempts;
    });
    expect(tally(attempts), 'every append while Redis was paused').to.have.keys('201');
    // A shared outage leaves every pod in its Service: the gateway answers new streams 503 with
    // Retry-After itself rather than the proxy answering for an empty Service.
    expect(readiness, 'readiness while Redis was paused').to.deep.equal([{ api: 200, gateway: 200, gatewayStatus: { status: 'degraded', redis: true } }]);
  });

  it('SIGKILL and an empty Redis on the same port: streams reconnect with Last-Event-ID and get everything from PostgreSQL', async () => {
    await streamAndCheck('redis restarted empty', async (scope, token) => {
      let done = false;
      const writing = appendWhile(cluster, scope, token, 'restart', () => done);
      await sleep(1000);
      await redis.restart();
      await sleep(3000);
      done = true;
      return writing;
    });
  });

  it('section 7 / invariant 8: a NEW room stream opened while Redis is paused, then while it is gone, answers 503 STREAM_UNAVAILABLE with Retry-After within its deadline, never 500; the same open succeeds by itself once Redis is back', async () => {
    const { scenario, actors } = await cluster.scenario();
    // A room no stream of this gateway has ever opened: nothing of it is held by the hub.
    const path = `${roomPath({ repositoryId: scenario.repositoryId, branchId: scenario.branchId })}/events`;
    const url = `${cluster.gateways[0]!.url}${path}`;
    const reader = await actors.reader();
    const openAnswered = async (ms: number): Promise<{ c: SseConnection; answeredInMs: number }> => {
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${path}: no answer within ${ms} ms`)), ms)));
      try {
        const c = await Promise.race([openSse(url, reader), hang]);
        if (c.status === 200) c.close();
        return { c, answeredInMs: Date.now() - started };
      } finally {
        clearTimeout(timer);
      }
    };
    // The gateway's stream-cap leases live in Redis (1 s deadline) and every stream needs one, so the
    // open is refused with the listener code and the Retry-After the gateway sets (1 s), not held.
    const expectUnavailable = (c: SseConnection, when: string) => {
      expect(c.status, `${when}: ${c.errorBody}`).to.equal(503);
      const response = refusalAsApiResponse(c);
      expect(validator.problems({ method: 'GET', path }, response), `${when}: contract`).to.deep.equal([]);
      expect(errorCode(response), when).to.equal('STREAM_UNAVAILABLE');
      expect(String(c.headers['retry-after']), `${when}: Retry-After`).to.match(/^[1-9][0-9]*$/);
    };

    redis.pause();
    let paused: Awaited<ReturnType<typeof openAnswered>>;
    try {
      paused = await openAnswered(5000);
    } finally {
      redis.resume();
    }
    expectUnavailable(paused.c, 'Redis paused');

    await redis.kill();
    let gone: Awaited<ReturnType<typeof openAnswered>>;
    try {
      gone = await openAnswered(5000);
    } finally {
      await redis.restart();
    }
    expectUnavailable(gone.c, 'Redis gone');

    // Recovery without a restart of the gateway: 503 STREAM_UNAVAILABLE only until its connections are back.
    const restartedAt = Date.now();
    let refusedAfterRestart = 0;
    for (;;) {
      const { c } = await openAnswered(5000);
      if (c.status === 200) break;
      expectUnavailable(c, 'Redis back');
      refusedAfterRestart += 1;
      expect(Date.now() - restartedAt, 'still refused after Redis came back').to.be.below(15_000);
      await sleep(200);
    }
    printReport('redis down at open', { pausedAnsweredInMs: paused.answeredInMs, goneAnsweredInMs: gone.answeredInMs, refusedAfterRestart, recoveredAfterMs: Date.now() - restartedAt });
  });
});
