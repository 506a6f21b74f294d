import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { ContractViolationError, errorCode, roomPath, type ApiClient, type RoomScope } from './api-client.ts';
import { useSoakCluster } from './delivery-soak.ts';
import type { GatewayCluster } from './gateway-cluster.ts';
import { checkDeliveries, isClean, printReport, readRoomHistory, sumReports, type DeliveryReport } from './sse-delivery-check.ts';
import { ResumingSseClient } from './sse-resuming-client.ts';
import { seededRandom } from './seeded-random.ts';
import { testConfig } from './test-config.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Connections each resuming client opens, at least, while the writers run (its first one included). */
const RECONNECTS_PER_RESUMING_CLIENT = 3;

/** The Redis deployment a failover soak runs on (a Cluster, or a Sentinel-watched primary). */
export interface SoakRedis {
  /** The REDIS_* variables that point a service at it. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

/** What {@link useFailoverSoak} starts: the Redis deployment, the services on it and the soak's clients. */
export interface FailoverSoak<R extends SoakRedis> {
  redis(): R;
  cluster(): GatewayCluster;
  /** Every client made, so the `after` hook can stop them when a run fails half-way. */
  clients: ResumingSseClient[];
}

/**
 * Registers, in the calling `describe`, the hooks of a failover soak: `start` the Redis deployment,
 * then the soak's 2 APIs and 2 gateways on it; after the tests
 * the clients and services stop, then Redis.
 */
export function useFailoverSoak<R extends SoakRedis>(start: () => Promise<R>): FailoverSoak<R> {
  let redis: R | undefined;
  before(async () => {
    redis = await start();
  });
  const soak = useSoakCluster({ redisEnv: () => redis!.env() });
  after(async () => {
    await redis?.stop();
  });
  return {
    redis: () => {
      if (!redis) throw new Error('the soak redis is not started');
      return redis;
    },
    cluster: soak.cluster,
    clients: soak.clients,
  };
}

export interface FailoverSoakOptions {
  title: string;
  /** Fresh scenarios; each gives 2 rooms (repository and branch), one written by its human, one by its bot. */
  scenarios: number;
  /** Resuming SSE clients per room (at least 2: the first keeps its connection, the others reconnect at random). */
  clientsPerRoom: number;
  /** Pause between one writer's acknowledged append and its next. @defaultValue 20 */
  paceMs?: number;
  /** How long the writers append before `failover` is called. @defaultValue 1500 */
  beforeFailoverMs?: number;
  /** How long they keep appending once `failover` has resolved (the recovered deployment at work). @defaultValue 2000 */
  afterFailoverMs?: number;
  /**
   * Kills the Redis master (chosen by the deployment's key prefix) and resolves, with figures for
   * the report, once the deployment's Redis serves every key again.
   */
  failover(context: { keyPrefix: string }): Promise<Record<string, unknown>>;
}

/** What happened to one Idempotency-Key. */
interface KeyRecord {
  key: string;
  room: number;
  body: string;
  /** Failed answers before the acknowledgement: `<status> <code>`, or the error of a request that got none. */
  failures: string[];
  /** Status of the acknowledgement (201, or 200 when a lost answer had committed it). */
  status: number;
  messageId: string;
}

export interface FailoverSoakResult {
  appends: number;
  /** Append attempts that failed and were retried with the same key. */
  failedAttempts: number;
  /** Keys with at least one failed attempt. */
  retriedKeys: number;
  /** Failed answers by `<status> <code>`. */
  failures: Record<string, number>;
  deliveries: ReturnType<typeof sumReports>;
  connections: number;
  failover: Record<string, unknown>;
}

/**
 * A delivery soak across a Redis failover: per scenario a repository room written by its human and
 * a branch room written by its bot, `clientsPerRoom` resuming SSE clients per room through random
 * gateways, and one writer per room appending through the API processes in turn until
 * `afterFailoverMs` after `failover` resolved. A failed append is retried with the same
 * Idempotency-Key (on the next API) until acknowledged. Then it checks:
 *
 * - no append failed: an append needs PostgreSQL and core, not Redis (its rate window is counted
 *   in its own append statement, and a publish that fails is left to the outbox relay); an append
 *   that did fail is reported with its `<status> <code>` and retried with the same key;
 * - every key produced exactly one message, the acknowledged one, and sending a retried key (and a
 *   sample of the others) once more answers 200 with that original message;
 * - every client of every room got every message of its room exactly once, in list order (one
 *   client per room keeps its connection, the others resume at random moments), and every service
 *   was ready again within 30 s of the failover.
 */
export async function runFailoverSoak(soak: FailoverSoak<SoakRedis>, options: FailoverSoakOptions): Promise<FailoverSoakResult> {
  const cluster = soak.cluster();
  const seed = testConfig.concurrencySeed;
  const random = seededRandom(seed);
  const context = `seed ${seed} (rerun with CONCURRENCY_SEED=${seed})`;

  const rooms: Array<{ scope: RoomScope; writerToken: string; readerToken: string }> = [];
  for (let s = 0; s < options.scenarios; s += 1) {
    const { scenario, actors } = await cluster.scenario();
    const readerToken = await actors.reader();
    rooms.push({ scope: { repositoryId: scenario.repositoryId }, writerToken: await actors.writer(), readerToken });
    rooms.push({ scope: { repositoryId: scenario.repositoryId, branchId: scenario.branchId }, writerToken: await actors.appendBot(), readerToken });
  }

  const clients = rooms.map((room) =>
    Array.from({ length: options.clientsPerRoom }, (_, i) => {
      const client = new ResumingSseClient({
        pickBase: () => cluster.gateways[Math.floor(random() * cluster.gateways.length)]!.url,
        path: `${roomPath(room.scope)}/events`,
        token: room.readerToken,
        random,
        // The first client of a room keeps its connection for as long as the gateway does, so it
        // depends on live delivery through the new master rather than on the store's replay.
        reconnectAfterMs: i === 0 ? undefined : [300, 2500],
      });
      soak.clients.push(client);
      client.start();
      return client;
    }),
  );

  const resumingClientCount = rooms.length * (options.clientsPerRoom - 1);
  let stopWriting = false;
  const records: KeyRecord[] = [];
  const writers = rooms.map(async (room, r) => {
    for (let i = 0; !stopWriting; i += 1) {
      const record = await appendUntilAcknowledged(cluster.apiClients, room.scope, room.writerToken, r, `room ${r} #${i}`, i);
      records.push(record);
      await sleep(options.paceMs ?? 20);
    }
  });
  const writing = Promise.all(writers);
  // A writer that gives up fails the run when `writing` is awaited below, not as an unhandled rejection first.
  writing.catch(() => undefined);
  const t0 = Date.now();
  let failover: Record<string, unknown>;
  try {
    await sleep(options.beforeFailoverMs ?? 1500);
    const appendsBefore = records.length;
    failover = { appendsBefore, ...(await options.failover({ keyPrefix: cluster.keyPrefix })) };
    const recovered = Date.now();
    await waitAllReady(cluster);
    failover.servicesReadyMs = Date.now() - recovered;
    await sleep(options.afterFailoverMs ?? 2000);
    // The writers go on until the resuming clients have reconnected several times each, so the
    // reconnect-while-writing property below is exercised however fast the failover went.
    const resumingConnections = () => clients.flatMap((room) => room.slice(1)).reduce((n, c) => n + c.connections, 0);
    const enoughBy = Date.now() + 15_000;
    while (resumingConnections() <= resumingClientCount * RECONNECTS_PER_RESUMING_CLIENT && Date.now() < enoughBy) await sleep(100);
  } finally {
    stopWriting = true;
    await writing;
  }
  const writeSeconds = (Date.now() - t0) / 1000;

  const failures = new Map<string, number>();
  for (const failure of records.flatMap((k) => k.failures)) failures.set(failure, (failures.get(failure) ?? 0) + 1);
  const retried = records.filter((k) => k.failures.length > 0);
  const failedAttempts = retried.reduce((n, k) => n + k.failures.length, 0);
  expect(Object.fromEntries(failures), `${context}: appends failed while Redis failed over, though they do not use it`).to.deep.equal({});

  // A retried key sent once more, and a sample of the others: the original message, answered 200.
  const others = records.filter((k) => k.failures.length === 0);
  const resent = [...retried, ...Array.from({ length: Math.min(20, others.length) }, () => others[Math.floor(random() * others.length)]!)];
  let replays = 0;
  for (const [n, record] of resent.entries()) {
    const room = rooms[record.room]!;
    const answer = await cluster.apiClients[n % cluster.apiClients.length]!.append<MessageResponse>(room.scope, room.writerToken, { bodyMarkdown: record.body }, { key: record.key });
    expect({ status: answer.status, messageId: answer.body.messageId }, `${context}: key ${record.key} sent again`).to.deep.equal({ status: 200, messageId: record.messageId });
    replays += 1;
  }

  const reports: DeliveryReport[] = [];
  for (const [r, room] of rooms.entries()) {
    const history = await readRoomHistory(cluster.apiClients[0]!, room.scope, room.readerToken);
    const mine = records.filter((k) => k.room === r);
    const byBody = new Map<string, string[]>();
    for (const m of history) byBody.set(m.bodyMarkdown, [...(byBody.get(m.bodyMarkdown) ?? []), m.messageId]);
    const wrong = mine.filter((k) => byBody.get(k.body)?.length !== 1 || byBody.get(k.body)![0] !== k.messageId);
    expect(wrong.map((k) => `${k.key}: ${JSON.stringify(byBody.get(k.body) ?? [])} for ${k.messageId}`), `${context}: room ${r}, keys without exactly their acknowledged message`).to.deep.equal([]);
    expect(history.length, `${context}: room ${r} holds exactly the acknowledged messages`).to.equal(mine.length);

    const deadline = Date.now() + 30_000;
    const complete = (c: ResumingSseClient) => new Set(c.received.map((e) => (JSON.parse(e.data) as MessageResponse).messageId)).size >= history.length;
    while (Date.now() < deadline && !clients[r]!.every(complete)) await sleep(200);
    await Promise.all(clients[r]!.map((c) => c.stop()));
    for (const client of clients[r]!) {
      expect(client.fatal, `${context}: room ${r}, clients refused for good`).to.deep.equal([]);
      reports.push(checkDeliveries(history, client.received));
    }
  }
  const deliveries = sumReports(reports);
  const connections = clients.flat().reduce((n, c) => n + c.connections, 0);
  const resuming = clients.flatMap((room) => room.slice(1));
  expect(resuming.reduce((n, c) => n + c.connections, 0), `${context}: the resuming clients reconnected many times while writers were busy`).to.be.greaterThan(resuming.length * RECONNECTS_PER_RESUMING_CLIENT);
  const result: FailoverSoakResult = {
    appends: records.length,
    failedAttempts,
    retriedKeys: retried.length,
    failures: Object.fromEntries(failures),
    deliveries,
    connections,
    failover,
  };
  printReport(options.title, {
    rooms: rooms.length,
    appends: records.length,
    writeSeconds,
    failedAttempts,
    retriedKeys: retried.length,
    acknowledgedOnRetryAs200: retried.filter((k) => k.status === 200).length,
    resentAnswered200: replays,
    failures: JSON.stringify(result.failures),
    ...deliveries,
    connections,
    ...failover,
  });
  expect(
    { lost: deliveries.lost, duplicated: deliveries.duplicated, unexpected: deliveries.unexpected, reordered: deliveries.reordered, badIds: deliveries.badIds },
    `${context}: ${JSON.stringify(reports.filter((r) => !isClean(r)).slice(0, 3))}`,
  ).to.deep.equal({ lost: 0, duplicated: 0, unexpected: 0, reordered: 0, badIds: 0 });
  return result;
}

/**
 * Waits until every API and gateway reports every dependency answering (`ready`, not `degraded`):
 * the gateways' readiness pings Redis through the backbone.
 */
async function waitAllReady(cluster: GatewayCluster): Promise<void> {
  const deadline = Date.now() + 30_000;
  const status = (url: string) => fetch(`${url}/readyz`).then(async (r) => ((await r.json()) as { status?: string }).status, () => undefined);
  for (const service of [...cluster.apis, ...cluster.gateways]) {
    while ((await status(service.adminUrl)) !== 'ready') {
      if (Date.now() > deadline) throw new Error(`${service.name} not ready within 30 s of the failover`);
      await sleep(100);
    }
  }
}

/** Appends one message, retrying with the same key on the next API until acknowledged (at most 30 s). */
async function appendUntilAcknowledged(apis: ApiClient[], scope: RoomScope, token: string, room: number, label: string, turn: number): Promise<KeyRecord> {
  const key = ulid();
  const body = `${label} ${key}`;
  const failures: string[] = [];
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    const api = apis[(turn + attempt) % apis.length]!;
    try {
      const answer = await api.append<MessageResponse>(scope, token, { bodyMarkdown: body }, { key });
      if (answer.status === 201 || answer.status === 200) return { key, room, body, failures, status: answer.status, messageId: answer.body.messageId };
      failures.push(`${answer.status} ${errorCode(answer) ?? 'no envelope'}`);
    } catch (err) {
      // A broken contract or connection is recorded as a failure of its own kind, which the soak refuses.
      failures.push(err instanceof ContractViolationError ? `contract violation: ${err.message.split('\n')[0]}` : `no answer: ${(err as Error).message}`);
    }
    if (Date.now() - started > 30_000) throw new Error(`${label} (key ${key}) never acknowledged: ${failures.slice(-3).join('; ')}`);
    await sleep(50);
  }
}
