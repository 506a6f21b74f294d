import { expect } from 'chai';
import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { ApiClient, errorCode, roomPath, type RoomScope } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { readMetric, startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { checkDeliveries, expectClean, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import { ResumingSseClient, type ReceivedMessage } from '../harness/sse-resuming-client.ts';
import { openSse, refusalAsApiResponse, type OpenSseOptions, type SseConnection } from '../harness/sse-stream.ts';
import { seededRandom } from '../harness/seeded-random.ts';
import { TcpProxy } from '../harness/tcp-proxy.ts';
import { testConfig } from '../harness/test-config.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Only checks answers against the contract; it sends nothing. */
const validator = new ApiClient('http://127.0.0.1:1');
/** An open must be answered, not held: the gateway's pool gives up connecting after 3 s, so 5 s is ample. */
const OPEN_ANSWER_MS = 5000;

/** Opens a stream, failing (instead of hanging the test) when no answer comes within `ms`. */
async function openWithin(url: string, token: string, ms: number, headers: Record<string, string> = {}, onEvent?: OpenSseOptions['onEvent']): Promise<SseConnection> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${url}: no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([openSse(url, token, { headers, ...(onEvent ? { onEvent } : {}) }), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A refused open: contract-valid envelope, the expected status and code, and the integer Retry-After the gateway sets. */
function expectRefusal(c: SseConnection, path: string, status: number, code: string): void {
  expect(c.status, `${path}: ${c.errorBody}`).to.equal(status);
  const response = refusalAsApiResponse(c);
  expect(validator.problems({ method: 'GET', path }, response), `${path}: contract`).to.deep.equal([]);
  expect(errorCode(response), path).to.equal(code);
  expect(String(c.headers['retry-after']), `${path}: Retry-After`).to.match(/^[1-9][0-9]*$/);
}

/** Waits until `done()` is true, or fails with `what` after `timeoutMs`. */
async function waitFor(what: string, done: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(25);
  }
  return Date.now() - started;
}

const messageIdOf = (r: ReceivedMessage) => (JSON.parse(r.data) as MessageResponse).messageId;

describe('streams: PostgreSQL cut off from the gateway (its own TCP proxy) while appends still commit through the API (invariant 8; spec section 6 resume rule 5, section 7)', function () {
  this.timeout(90_000);
  let proxy: TcpProxy;
  let cluster: GatewayCluster;
  const clients: ResumingSseClient[] = [];
  const open: SseConnection[] = [];

  before(async () => {
    // Only the gateway goes through the proxy: the APIs keep their own connections, so appends
    // commit (and publish) while the gateway cannot read the store.
    const server = new URL(testConfig.databaseUrl);
    proxy = new TcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const proxyHost = `127.0.0.1:${await proxy.start()}`;
    cluster = await startGatewayCluster({
      apis: 2,
      gateways: 1,
      gatewayEnv: { GATEWAY_HEARTBEAT_MS: '1000' },
      gatewayDatabaseUrl: (url) => Object.assign(new URL(url), { host: proxyHost }).toString(),
    });
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.close();
    await proxy.restore();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.stop()));
    await cluster?.stop();
    await proxy?.close();
  });

  it('section 7: opening a room stream (persisted room, with and without Last-Event-ID; virtual branch room) or the inbox stream while PostgreSQL is unreachable answers 503 STORE_UNAVAILABLE with Retry-After, never 500, and the same opens succeed by themselves once it is back', async () => {
    const { scenario, actors } = await cluster.scenario();
    const gateway = cluster.gateways[0]!;
    const roomScope: RoomScope = { repositoryId: scenario.repositoryId };
    const roomEvents = `${roomPath(roomScope)}/events`;
    const writer = await actors.writer();
    const reader = await actors.reader();
    expectStatus(await cluster.apiClients[0]!.append(roomScope, writer, { bodyMarkdown: 'before the cut' }), 201);
    // A real durable cursor to resume from, taken from the stream itself.
    let cursor: string | undefined;
    const first = await openWithin(`${gateway.url}${roomEvents}`, reader, OPEN_ANSWER_MS, {}, (e) => (cursor ??= e.event === 'message' ? e.id : undefined));
    open.push(first);
    expect(first.status, first.errorBody).to.equal(200);
    await waitFor('the first message event', () => cursor !== undefined, 5000);
    first.close();

    const opens: Array<{ path: string; headers: Record<string, string> }> = [
      { path: roomEvents, headers: {} },
      { path: roomEvents, headers: { 'last-event-id': cursor! } },
      { path: `${roomEvents}?cursor=${encodeURIComponent(cursor!)}`, headers: {} },
      // Never created: the gateway must look it up (and would materialize it) in the store.
      { path: `${roomPath({ repositoryId: scenario.repositoryId, branchId: scenario.branchId })}/events`, headers: {} },
      { path: `/v1/repositories/${scenario.repositoryId}/inbox/events`, headers: {} },
    ];
    await proxy.cut();
    const answeredInMs: number[] = [];
    for (const { path, headers } of opens) {
      const started = Date.now();
      const c = await openWithin(`${gateway.url}${path}`, reader, OPEN_ANSWER_MS, headers);
      if (c.status === 200) open.push(c);
      answeredInMs.push(Date.now() - started);
      expectRefusal(c, path, 503, 'STORE_UNAVAILABLE');
    }
    await proxy.restore();

    // Recovery needs no restart: each open answers 200 again (503 STORE_UNAVAILABLE only until the pool reconnects).
    const restoredAt = Date.now();
    let refusedAfterRestore = 0;
    for (const { path, headers } of opens) {
      for (;;) {
        const c = await openWithin(`${gateway.url}${path}`, reader, OPEN_ANSWER_MS, headers);
        if (c.status === 200) {
          open.push(c);
          c.close();
          break;
        }
        expectRefusal(c, path, 503, 'STORE_UNAVAILABLE');
        refusedAfterRestore += 1;
        expect(Date.now() - restoredAt, `${path} still refused after PostgreSQL came back`).to.be.below(15_000);
        await sleep(200);
      }
    }
    printReport('store cut at open', { opens: opens.length, answeredInMs: answeredInMs.join('/'), refusedAfterRestore, recoveredAfterMs: Date.now() - restoredAt });
  });

  it('resume rule 5: a stream open before the cut, with appends committing throughout, keeps delivering or closes without a cursor of its own; after the cut it resumes with Last-Event-ID and holds every message once, in list order', async () => {
    const { scenario, actors } = await cluster.scenario();
    const scope: RoomScope = { repositoryId: scenario.repositoryId };
    const gateway = cluster.gateways[0]!;
    const writer = await actors.writer();
    const client = new ResumingSseClient({ pickBase: () => gateway.url, path: `${roomPath(scope)}/events`, token: await actors.reader(), random: seededRandom(23), backoffMs: [50, 500] });
    clients.push(client);
    const storeClosesBefore = await readMetric(gateway, 'chat_gateway_streams_closed_total', { kind: 'message', reason: 'store_error' });
    client.start();

    let writing = true;
    const statuses: Array<number | string> = [];
    const writers = Promise.all(
      Array.from({ length: 3 }, async (_, w) => {
        for (let i = 0; writing; i += 1) {
          const answer = await cluster.apiClients[1]!.append(scope, writer, { bodyMarkdown: `writer ${w} #${i}` }).catch((err: Error) => ({ status: err.message }));
          statuses.push(answer.status);
          await sleep(20);
        }
      }),
    );
    await waitFor('deliveries before the cut', () => client.received.length >= 10, 10_000);
    await proxy.cut();
    const atCut = { received: client.received.length, connections: client.connections, committed: statuses.length };
    await sleep(3000);
    const duringCut = { received: client.received.length - atCut.received, committed: statuses.length - atCut.committed, connections: client.connections };
    await proxy.restore();
    await sleep(1500);
    writing = false;
    await writers;

    // Every append committed: the API's own store connection was never cut.
    expect(statuses.filter((s) => s !== 201), 'appends answered other than 201').to.deep.equal([]);
    const history = await readRoomHistory(cluster.apiClients[1]!, scope, writer);
    expect(history).to.have.length(statuses.length);
    const drainedAfterMs = await waitFor('the stream catching up with the room', () => new Set(client.received.map(messageIdOf)).size >= history.length, 15_000);
    await client.stop();

    const storeCloses = (await readMetric(gateway, 'chat_gateway_streams_closed_total', { kind: 'message', reason: 'store_error' })) - storeClosesBefore;
    const report = checkDeliveries(history, client.received);
    printReport('store cut mid-stream (live)', {
      committed: history.length,
      committedDuringCut: duringCut.committed,
      deliveredDuringCut: duringCut.received,
      connections: client.connections,
      storeCloses,
      refusals: JSON.stringify(Object.fromEntries(client.refusals)),
      lost: report.lost,
      duplicated: report.duplicated,
      replayed: report.replayed,
      unexpected: report.unexpected,
      reordered: report.reordered,
      drainedAfterMs,
    });
    expect(client.fatal).to.deep.equal([]);
    // A reconnect during the cut may only be refused with 503 (its body is checked in the test above).
    expect([...client.refusals.keys()].filter((s) => s !== 503), 'refusals other than 503').to.deep.equal([]);
    if (duringCut.connections === atCut.connections) {
      // The stream stayed open through the cut: it must not have stalled while messages committed.
      expect(duringCut.received, 'an open stream delivered nothing while messages committed').to.be.greaterThan(0);
    }
    expectClean(report);
  });

  it('resume rule 5: a live gap the gateway must fill from PostgreSQL while it is cut (an API SIGKILLed between commit and publish) closes the stream without skipping or inventing a cursor; 503 STORE_UNAVAILABLE until PostgreSQL is back, then Last-Event-ID gets every message once, in list order', async () => {
    const victim = cluster.apis[0]!;
    const [victimApi, survivorApi] = [cluster.apiClients[0]!, cluster.apiClients[1]!];
    const gateway = cluster.gateways[0]!;
    await victim.stop();
    await victim.startCrashingAfter('commit:1');
    try {
      const { scenario, actors } = await cluster.scenario();
      const scope: RoomScope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const path = `${roomPath(scope)}/events`;
      const writer = await actors.writer();
      const reader = await actors.reader();
      const received: ReceivedMessage[] = [];
      const kindsAfterFirst: string[] = [];
      const connect = (n: number, headers: Record<string, string> = {}) =>
        openWithin(`${gateway.url}${path}`, reader, OPEN_ANSWER_MS, headers, (e) => {
          if (e.event === 'message') received.push({ id: e.id ?? '', data: e.data, connection: n });
          else if (n === 1 && received.length > 0) kindsAfterFirst.push(`${e.event ?? 'message'}${e.id === undefined ? '' : ` id=${e.id}`}`);
        });
      const storeClosesBefore = await readMetric(gateway, 'chat_gateway_streams_closed_total', { kind: 'message', reason: 'store_error' });

      const first = await connect(1);
      open.push(first);
      expect(first.status, first.errorBody).to.equal(200);
      const m1 = await survivorApi.append<MessageResponse>(scope, writer, { bodyMarkdown: 'm1, delivered live' });
      expectStatus(m1, 201);
      await waitFor('m1 on the first connection', () => received.length === 1, 5000);

      await proxy.cut();
      // m2 commits, then its API dies before publishing it: only the outbox relay (2 s grace) will announce it.
      const cut = await victimApi.append(scope, writer, { bodyMarkdown: 'm2, committed, never published by its API' }, { key: ulid() }).then(
        (r) => `answered ${r.status}`,
        (err: Error) => err.message,
      );
      expect(cut, 'the victim never answered the crashing append').to.not.match(/^answered/);
      await victim.exited(5000);
      // m3 is published live at once: the gateway sees seq 3 after seq 1 and must read seq 2 from the store.
      const m3 = await survivorApi.append<MessageResponse>(scope, writer, { bodyMarkdown: 'm3, published live after the gap' });
      expectStatus(m3, 201);
      const gapAt = Date.now();
      const end = await Promise.race([first.done, sleep(5000).then(() => 'still open' as const)]);
      const closedAfterMs = Date.now() - gapAt;
      // Skipping m2 (sending m3) would lose m2 for good on resume; staying open silently would hang.
      expect(received.map((r) => r.id === '' ? 'no id' : messageIdOf(r)), 'the first connection delivered m1 and nothing past the gap').to.deep.equal([m1.body.messageId]);
      expect(end, 'the stream closed when its store read failed').to.equal('ended');
      expect(kindsAfterFirst.filter((k) => k !== 'heartbeat'), 'events after m1 (no id, no other kind)').to.deep.equal([]);
      const storeCloses = (await readMetric(gateway, 'chat_gateway_streams_closed_total', { kind: 'message', reason: 'store_error' })) - storeClosesBefore;
      expect(storeCloses, 'close reason store_error').to.equal(1);

      // Resuming while the store is still cut is refused, so the client backs off and keeps its cursor.
      const lastId = received.at(-1)!.id;
      const refused = await connect(2, { 'last-event-id': lastId });
      if (refused.status === 200) open.push(refused);
      expectRefusal(refused, path, 503, 'STORE_UNAVAILABLE');

      await proxy.restore();
      const restoredAt = Date.now();
      let second: SseConnection;
      for (;;) {
        second = await connect(2, { 'last-event-id': lastId });
        if (second.status === 200) break;
        expectRefusal(second, path, 503, 'STORE_UNAVAILABLE');
        expect(Date.now() - restoredAt, 'resume still refused after PostgreSQL came back').to.be.below(15_000);
        await sleep(200);
      }
      open.push(second);
      const m4 = await survivorApi.append<MessageResponse>(scope, writer, { bodyMarkdown: 'm4, live after the resume' });
      expectStatus(m4, 201);
      await waitFor('m4 on the resumed connection', () => received.some((r) => messageIdOf(r) === m4.body.messageId), 10_000);
      await sleep(300);
      second.close();

      const history = await readRoomHistory(survivorApi, scope, writer);
      expect(history.map((m) => m.bodyMarkdown)).to.deep.equal(['m1, delivered live', 'm2, committed, never published by its API', 'm3, published live after the gap', 'm4, live after the resume']);
      const report = checkDeliveries(history, received);
      printReport('store cut mid-stream (gap fill)', { closedAfterMs, storeCloses, resumedAfterMs: Date.now() - restoredAt, delivered: report.delivered, lost: report.lost, duplicated: report.duplicated, replayed: report.replayed, unexpected: report.unexpected, reordered: report.reordered });
      expectClean(report);
    } finally {
      // Back to a plain API (also when the test failed before the crash) for whatever runs next.
      await victim.stop();
      await victim.start();
    }
  });
});
