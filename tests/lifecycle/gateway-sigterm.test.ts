/**
 * Graceful shutdown of a stream gateway: SIGTERM sends `handoff` to every stream at moments
 * spread over GATEWAY_DRAIN_MS, then the process exits 0; clients resume on another gateway with
 * Last-Event-ID and lose, double and reorder nothing.
 */
import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ApiClient, roomPath } from '../harness/api-client.ts';
import { checkDeliveries, isClean, printReport, readRoomHistory, sumReports } from '../harness/sse-delivery-check.ts';
import type { ReceivedMessage } from '../harness/sse-resuming-client.ts';
import { openSse, type SseConnection } from '../harness/sse-stream.ts';
import { Actors } from '../harness/stacks.ts';
import { eventually, sleep, startLifecycleWorld, terminate, type LifecycleWorld, type ServiceProcess, type Termination } from './service-processes.ts';

const CLIENTS = 20;
const WRITERS = 3;
const DRAIN_MS = 3000;
const GATEWAY_ENV = { GATEWAY_DRAIN_MS: String(DRAIN_MS), STREAM_CAP_PER_PRINCIPAL: '100' };

/** One SSE client: its first stream on gateway A, then (after the handoff) one on gateway B. */
interface Client {
  received: ReceivedMessage[];
  lastId: string | undefined;
  /** Arrival time and connection of every handoff event. */
  handoffs: Array<{ at: number; connection: number; data: string }>;
  /** How each connection ended, and whether a handoff came before the end. */
  ends: Array<{ connection: number; end: string; handoffBefore: boolean }>;
  current: SseConnection | undefined;
}

describe('lifecycle: SIGTERM to a stream gateway with open streams', function () {
  this.timeout(180_000);
  let world: LifecycleWorld;
  let api: ServiceProcess;
  let gatewayA: ServiceProcess;
  let gatewayB: ServiceProcess;

  before(async () => {
    world = await startLifecycleWorld();
    api = await world.startApi('api');
    [gatewayA, gatewayB] = await Promise.all([world.startGateway('gateway-a', GATEWAY_ENV), world.startGateway('gateway-b', GATEWAY_ENV)]);
  });
  after(async () => {
    await world?.stop();
  });

  it('every stream gets a handoff before it closes, spread over the drain window; A exits 0; clients resume on B with nothing lost, doubled or reordered', async () => {
    const scenario = await world.fixture.scenario();
    const actors = new Actors(world.core, scenario);
    const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const streamPath = `${roomPath(scope)}/events`;
    const readerToken = await actors.reader();
    const writerTokens = [await actors.writer(), await actors.appendBot()];
    const writerApi = new ApiClient(api.url);

    const connect = async (client: Client, base: string, connection: number): Promise<SseConnection> => {
      const stream = await openSse(`${base}${streamPath}`, readerToken, {
        headers: client.lastId === undefined ? {} : { 'last-event-id': client.lastId },
        onEvent: (event) => {
          if (event.event === 'handoff') client.handoffs.push({ at: Date.now(), connection, data: event.data });
          if ((event.event ?? 'message') !== 'message') return;
          client.received.push({ id: event.id ?? '', data: event.data, connection });
          if (event.id !== undefined) client.lastId = event.id;
        },
      });
      expect(stream.status, stream.errorBody).to.equal(200);
      client.current = stream;
      return stream;
    };
    const clients: Client[] = Array.from({ length: CLIENTS }, () => ({ received: [], lastId: undefined, handoffs: [], ends: [], current: undefined }));
    // First streams on A; when one ends, the client reconnects to B from its last processed message.
    // (Wrapped in an object: an async function returning a promise would wait for it.)
    const lifecycles = await Promise.all(
      clients.map(async (client) => {
        const first = await connect(client, gatewayA.url, 1);
        const resumed = (async () => {
          const end = await first.done;
          client.ends.push({ connection: 1, end, handoffBefore: client.handoffs.some((h) => h.connection === 1) });
          await connect(client, gatewayB.url, 2);
        })();
        return { resumed };
      }),
    );

    let writing = true;
    const acknowledged: MessageResponse[] = [];
    const writers = Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let seq = 0; writing; seq++) {
          const answer = await writerApi.append<MessageResponse>(scope, writerTokens[w % writerTokens.length]!, { bodyMarkdown: `writer ${w} message ${seq}` });
          expect(answer.status, answer.text).to.equal(201);
          acknowledged.push(answer.body);
          await sleep(20);
        }
      }),
    );

    let termination: Termination;
    let signalledAt: number;
    try {
      await eventually('every client to receive a message on gateway A', () => clients.every((c) => c.received.length > 0), 20_000);
      signalledAt = Date.now();
      termination = await terminate(gatewayA, DRAIN_MS + 20_000);
      await Promise.all(lifecycles.map((l) => l.resumed));
      await sleep(1000);
    } finally {
      writing = false;
      await writers;
    }

    const history = await readRoomHistory(writerApi, scope, readerToken);
    await eventually(
      'every client to catch up on gateway B',
      () => clients.every((c) => new Set(c.received.map((m) => m.id)).size >= history.length),
      20_000,
    ).catch(() => undefined); // the report below says what is missing
    for (const client of clients) client.current?.close();
    writerApi.close();

    const reports = clients.map((c) => checkDeliveries(history, c.received));
    const handoffTimes = clients.flatMap((c) => c.handoffs.filter((h) => h.connection === 1).map((h) => h.at - signalledAt)).sort((x, y) => x - y);
    const busiest50ms = Math.max(0, ...handoffTimes.map((t) => handoffTimes.filter((u) => u >= t && u < t + 50).length));
    printReport('gateway SIGTERM', {
      ...sumReports(reports),
      messages: history.length,
      handoffsMs: handoffTimes.join(','),
      busiest50ms,
      exitCode: termination.code,
      exitMs: termination.elapsedMs,
    });

    expect({ code: termination.code, signal: termination.signal }, gatewayA.service.log).to.deep.equal({ code: 0, signal: null });
    expect(termination.elapsedMs, 'A exits once the drain window is over').to.be.at.most(DRAIN_MS + 5000);
    for (const [i, client] of clients.entries()) {
      const onA = client.handoffs.filter((h) => h.connection === 1);
      expect(onA, `client ${i}: one handoff on gateway A`).to.have.length(1);
      expect(JSON.parse(onA[0]!.data), `client ${i}: handoff data`).to.deep.equal({ reason: 'stream_rotation' });
      expect(client.ends[0], `client ${i}: the stream on A ended after its handoff`).to.deep.include({ connection: 1, handoffBefore: true });
    }
    expect(handoffTimes.at(-1)! - handoffTimes[0]!, 'handoffs spread over the drain window').to.be.at.least(DRAIN_MS / 2);
    expect(handoffTimes.at(-1)!, 'handoffs within the drain window').to.be.at.most(DRAIN_MS + 2000);
    expect(busiest50ms, 'not all handoffs in the same 50 ms').to.be.at.most(CLIENTS / 2);

    // Nothing lost, doubled (beyond rule 7's one replay at the reconnect), reordered or invented.
    expect(history.map((m) => m.messageId).sort()).to.deep.equal(acknowledged.map((m) => m.messageId).sort());
    for (const [i, report] of reports.entries()) {
      expect(isClean(report), `client ${i}: ${JSON.stringify(report)}`).to.equal(true);
      expect(new Set(clients[i]!.received.map((m) => m.connection)), `client ${i}: delivered by A then B`).to.deep.equal(new Set([1, 2]));
    }
  });
});
