import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { roomPath } from './api-client.ts';
import { startGatewayCluster, type GatewayCluster } from './gateway-cluster.ts';
import { writeMessages } from './gateway-writers.ts';
import { checkDeliveries, isClean, printReport, readRoomHistory, sumReports, type DeliveryReport } from './sse-delivery-check.ts';
import { ResumingSseClient } from './sse-resuming-client.ts';
import { seededRandom } from './seeded-random.ts';
import { testConfig } from './test-config.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Registers, in the calling `describe`, the hooks of a soak's setup: 2 API and 2 gateway processes
 * (caps raised for the soak's clients, a heartbeat every second) started before the tests, and
 * every client and process stopped after them. Returns the cluster (once started) and the list
 * that `runDeliverySoak` fills with its clients.
 */
export function useSoakCluster(setup: { redisEnv?: () => Record<string, string> } = {}): { cluster: () => GatewayCluster; clients: ResumingSseClient[] } {
  let cluster: GatewayCluster | undefined;
  const clients: ResumingSseClient[] = [];
  before(async () => {
    cluster = await startGatewayCluster({
      apis: 2,
      gateways: 2,
      gatewayEnv: { STREAM_CAP_PER_PRINCIPAL: '1000', GATEWAY_HEARTBEAT_MS: '1000' },
      ...(setup.redisEnv ? { redisEnv: setup.redisEnv() } : {}),
    });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await cluster?.stop();
  });
  return {
    cluster: () => {
      if (!cluster) throw new Error('the soak cluster is not started');
      return cluster;
    },
    clients,
  };
}

export interface DeliverySoakOptions {
  /** Name of the run in the printed report. */
  title: string;
  clients: number;
  /**
   * How many of the clients keep one connection until the server ends it, so they see live
   * delivery alone (a reconnecting client also gets anything missed from the store's replay).
   * @defaultValue 0
   */
  steadyClients?: number;
  writers: number;
  /** Messages in all, split evenly over the writers. */
  messages: number;
  /**
   * The faults, run while the writers append: resolves (after `writing` settles, or earlier) with
   * what it did, for the report.
   */
  chaos(context: { random: () => number; writing: Promise<unknown> }): Promise<Record<string, unknown>>;
  /**
   * Runs once writing and `chaos` are done, before the room is read: may append more (a writer's
   * token is given) and returns what it had acknowledged.
   */
  afterWriting?(context: { scope: { repositoryId: string }; token: string }): Promise<MessageResponse[]>;
  /** Every client made, so an `after` hook can stop them when the run fails half-way. */
  clientRegistry: ResumingSseClient[];
}

export interface DeliverySoakResult {
  total: ReturnType<typeof sumReports>;
  reports: DeliveryReport[];
  /** Connections opened by all clients together. */
  connections: number;
  /** Answers a client could not recover from. */
  fatal: string[];
  /** Append attempts that failed and were retried with the same Idempotency-Key. */
  failedAppends: number;
  chaos: Record<string, unknown>;
  /** The seed, and how to rerun with it, for assertion messages. */
  context: string;
}

/**
 * The delivery soak of reliability tests 1 and 3 (tests/README.md): `clients` resuming clients stream one
 * repository room through randomly chosen gateways, reconnecting at random moments with
 * `Last-Event-ID`, while `writers` append `messages` through every API process (a failed append is
 * retried with the same key on the next one) and `chaos` breaks processes. Then it checks that the
 * room holds exactly the acknowledged messages and compares what every client received with the
 * room's list order.
 */
export async function runDeliverySoak(cluster: GatewayCluster, options: DeliverySoakOptions): Promise<DeliverySoakResult> {
  const seed = testConfig.concurrencySeed;
  const random = seededRandom(seed);
  const context = `seed ${seed} (rerun with CONCURRENCY_SEED=${seed})`;
  const { scenario, actors } = await cluster.scenario();
  const scope = { repositoryId: scenario.repositoryId };
  const readerToken = await actors.reader();
  const writerTokens = [await actors.writer(), await actors.appendBot()];

  const clients: ResumingSseClient[] = [];
  for (let i = 0; i < options.clients; i += 1) {
    const client = new ResumingSseClient({
      pickBase: () => cluster.gateways[Math.floor(random() * cluster.gateways.length)]!.url,
      path: `${roomPath(scope)}/events`,
      token: readerToken,
      random,
      reconnectAfterMs: i < (options.steadyClients ?? 0) ? undefined : [300, 2500],
    });
    clients.push(client);
    options.clientRegistry.push(client);
    client.start();
  }

  const t0 = Date.now();
  const perWriter = options.messages / options.writers;
  const failedAttempts = { count: 0 };
  const writing = Promise.all(
    Array.from({ length: options.writers }, (_, w) => writeMessages(cluster.apiClients, scope, writerTokens[w % 2]!, `writer ${w}`, perWriter, 0, 20_000, failedAttempts)),
  );
  const [written, chaos] = await Promise.all([writing, options.chaos({ random, writing })]);
  const writeSeconds = (Date.now() - t0) / 1000;
  const acknowledged = written.flat();
  expect(new Set(acknowledged.map((m) => m.messageId)).size, 'every append acknowledged once').to.equal(options.messages);
  acknowledged.push(...((await options.afterWriting?.({ scope, token: writerTokens[0]! })) ?? []));
  const expected = acknowledged.length;

  const history = await readRoomHistory(cluster.apiClients.find((_, i) => cluster.apis[i]!.running) ?? cluster.apiClients[0]!, scope, readerToken);
  expect(history.map((m) => m.messageId).sort(), 'the room holds exactly the acknowledged messages').to.deep.equal(acknowledged.map((m) => m.messageId).sort());

  // Delivery catches up within seconds once writing stops.
  const deadline = Date.now() + 30_000;
  const complete = (c: ResumingSseClient) => new Set(c.received.map((r) => (JSON.parse(r.data) as MessageResponse).messageId)).size >= expected;
  while (Date.now() < deadline && !clients.every(complete)) await sleep(200);
  await Promise.all(clients.map((c) => c.stop()));

  const reports = clients.map((c) => checkDeliveries(history, c.received));
  const total = sumReports(reports);
  const connections = clients.reduce((n, c) => n + c.connections, 0);
  const refusals = clients.reduce((n, c) => n + [...c.refusals.values()].reduce((a, b) => a + b, 0), 0);
  printReport(options.title, { ...total, connections, refusals, writeSeconds, failedAppends: failedAttempts.count, ...chaos });
  return { total, reports, connections, fatal: clients.flatMap((c) => c.fatal), chaos, context, failedAppends: failedAttempts.count };
}

/**
 * The soak's pass figures: nobody refused for good; 0 lost, duplicated (beyond the one replay
 * spec rule 7 allows), unexpected, reordered or malformed; and the clients really resumed, many times.
 */
export function expectCleanDelivery(result: DeliverySoakResult, clients: number): void {
  const { total, context } = result;
  expect(result.fatal, `${context}: clients refused for good`).to.deep.equal([]);
  expect(
    { lost: total.lost, duplicated: total.duplicated, unexpected: total.unexpected, reordered: total.reordered, badIds: total.badIds },
    `${context}: ${JSON.stringify(result.reports.filter((r) => !isClean(r)).slice(0, 3))}`,
  ).to.deep.equal({ lost: 0, duplicated: 0, unexpected: 0, reordered: 0, badIds: 0 });
  expect(result.connections, 'clients reconnected many times while writers were busy').to.be.greaterThan(clients * 3);
}
