import { expect } from 'chai';
import { startChatProcess, type ChatProcess } from '../harness/chat-process.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { SharedFixture } from '../harness/fixture-factory.ts';
import { startGatewayCluster, type GatewayCluster } from '../harness/gateway-cluster.ts';
import { runMisbehavingClients } from '../harness/misbehaving-clients.ts';
import { serverConnections } from '../harness/process-sockets.ts';
import { openSse, type SseConnection } from '../harness/sse-stream.ts';

/** 10,000 connections in all, half against each process. */
const PER_TARGET = 5000;
/** Connections at once: their client and server sockets stay far below the 20,000 open-files cap. */
const CONCURRENCY = 300;
const HEADERS_TIMEOUT_MS = 1000;
const KEEP_ALIVE_MS = 2000;
const PRINCIPAL_CAP = 16;
const ROOM_CAP = 24;
const limits = {
  HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
  STREAM_CAP_PER_PRINCIPAL: String(PRINCIPAL_CAP),
  STREAM_CAP_PER_ROOM: String(ROOM_CAP),
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Target {
  url: string;
  pid: () => number | undefined;
  alive: () => boolean;
  core: DevCoreClient;
}

describe('streams: 10,000 misbehaving connections leave the process up, every stream slot free and no socket held', function () {
  this.timeout(240_000);
  let chat: ChatProcess | undefined;
  let cluster: GatewayCluster | undefined;
  after(async () => {
    await chat?.stop();
    await cluster?.stop();
  });

  async function soak(name: string, target: Target): Promise<void> {
    const fixture = new SharedFixture(target.core);
    const scenario = await fixture.scenario();
    const [reader, writer] = await Promise.all([
      target.core.mintToken({ type: 'human', subjectId: scenario.users.reader }),
      target.core.mintToken({ type: 'human', subjectId: scenario.users.writer }),
    ]);
    const path = `/v1/repositories/${scenario.repositoryId}/room/events`;
    const { port, hostname } = new URL(target.url);
    const pid = target.pid()!;
    const baseline = await serverConnections(pid, Number(port));

    const started = Date.now();
    const { outcomes, held } = await runMisbehavingClients({ host: hostname, port: Number(port), path, token: reader, headersTimeoutMs: HEADERS_TIMEOUT_MS }, PER_TARGET, CONCURRENCY);
    const seconds = (Date.now() - started) / 1000;
    console.log(`      ${name}: ${PER_TARGET} connections in ${seconds.toFixed(1)} s: ${JSON.stringify(outcomes)}`);
    expect(Object.keys(outcomes).filter((k) => k.includes('stuck')), 'connections the server never answered or closed').to.deep.equal([]);
    expect(outcomes['late-head-then-reset: 408'], 'late heads answered 408').to.be.above(0);
    expect(outcomes['never-close: 401'], 'refusals to clients that never close').to.be.above(0);

    expect(target.alive(), `${name} is still running`).to.equal(true);
    // The server's side of every connection closes within the keep-alive time, though
    // `never-close` clients still hold theirs open. The baseline may include a keep-alive
    // connection of the harness's readiness check, which closes by itself meanwhile.
    const deadline = Date.now() + KEEP_ALIVE_MS + 1000;
    let connections = await serverConnections(pid, Number(port));
    while (connections > baseline && Date.now() < deadline) {
      await sleep(100);
      connections = await serverConnections(pid, Number(port));
    }
    expect(connections, `connections on ${name}'s port (baseline ${baseline})`).to.be.at.most(baseline);
    for (const socket of held) socket.destroy();

    // Every slot is free: the principal opens its whole cap and the room fills to its cap, each one 200.
    const streams: SseConnection[] = [];
    try {
      for (let i = 0; i < ROOM_CAP; i++) {
        const stream = await openSse(`${target.url}${path}`, i < PRINCIPAL_CAP ? reader : writer);
        streams.push(stream);
        expect(stream.status, `stream ${i + 1} of the room's ${ROOM_CAP}: ${stream.errorBody}`).to.equal(200);
      }
      const over = await openSse(`${target.url}${path}`, writer);
      streams.push(over);
      expect(over.status, 'one stream past the room cap').to.equal(429);
    } finally {
      for (const stream of streams) stream.close();
    }
  }

  it(`the all-in-one: ${PER_TARGET} connections`, async () => {
    chat = await startChatProcess({ name: 'chat-soak', env: { ...limits, LOG_LEVEL: 'warn' } });
    const running = chat;
    await soak('all-in-one', { url: running.url, pid: () => running.service.pid, alive: () => !running.service.hasExited, core: new DevCoreClient(running.coreUrl) });
  });

  it(`a standalone gateway: ${PER_TARGET} connections`, async () => {
    cluster = await startGatewayCluster({ apis: 0, gateways: 1, gatewayEnv: limits });
    const gateway = cluster.gateways[0]!;
    await soak('gateway', { url: gateway.url, pid: () => gateway.pid, alive: () => gateway.running, core: cluster.core });
  });
});
