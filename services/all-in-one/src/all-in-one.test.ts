import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpConfigOf, httpFields } from '@chat/service-config';
import { expect } from 'chai';
import { z } from 'zod';
import { startAllInOne, type RunningAllInOne } from './all-in-one.ts';
import { loadAllInOneConfig } from './config.ts';

const REPOSITORY = '01JGFJJZ00QNYBVPQTAT49MN0F';

/** An address of this machine that is not 127.0.0.1: its network interface's, or on Linux another loopback one. */
function otherLocalAddress(): string {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal);
  return external?.address ?? '127.0.0.2';
}

/** Whether a TCP connection to `host:port` is accepted. */
async function accepts(host: string, port: number): Promise<boolean> {
  const socket = connect(port, host);
  try {
    await once(socket, 'connect');
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

describe('all-in-one process', function () {
  this.timeout(120_000);
  let dataDir: string;
  let running: RunningAllInOne;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'chat-aio-'));
    running = await startAllInOne(
      loadAllInOneConfig({
        PORT: '0',
        DEV_CORE_PORT: '0',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        // Tight limits, so the tests below see them act; streams must outlive the request timeout.
        HTTP_HEADERS_TIMEOUT_MS: '500',
        HTTP_REQUEST_TIMEOUT_MS: '1000',
        GATEWAY_HEARTBEAT_MS: '300',
      }),
    );
  });
  after(async () => {
    await running?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('names every bad setting at start', () => {
    expect(() => loadAllInOneConfig({ PORT: 'x', GATEWAY_HEARTBEAT_MS: '-1' })).to.throw(/PORT: .*GATEWAY_HEARTBEAT_MS/);
  });

  it('serves the contract and prints where it is and demo tokens', async () => {
    expect((await fetch(`${running.url}/v1/openapi.json`)).status).to.equal(200);
    expect(running.banner).to.contain(`chat service: ${running.url}`);
    expect(running.banner).to.match(/human u_alice: eyJ/);
  });

  it('runs API, gateway and notifier on one port: an append with a mention reaches the room stream and the inbox', async () => {
    const token = running.banner.match(/human u_alice: (\S+)/)![1]!;
    const mint = async (body: unknown) => ((await (await fetch(`${running.coreUrl}/dev/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { token: string }).token;
    const bob = await mint({ type: 'human', subjectId: 'u_bob' });
    const resource = await mint({ type: 'core_resource', subjectId: 'u_alice' });

    const stream = await fetch(`${running.url}/v1/repositories/${REPOSITORY}/room/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(stream.status).to.equal(200);
    const append = await fetch(`${running.url}/v1/repositories/${REPOSITORY}/room/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-service-core-authorization': `Bearer ${resource}`, 'content-type': 'application/json', 'idempotency-key': '01JGFJJZ00QNYBVPQTAT49MN9Z' },
      body: JSON.stringify({ bodyMarkdown: 'hi @bob', mentions: [{ principalKind: 'human', principalId: 'u_bob', startByte: 3, endByte: 7 }] }),
    });
    expect(append.status).to.equal(201);
    const message = (await append.json()) as { messageId: string };

    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes(message.messageId)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).to.match(/event: message\n/);

    let items: Array<{ messageId: string }> = [];
    for (let i = 0; i < 100 && items.length === 0; i++) {
      items = ((await (await fetch(`${running.url}/v1/repositories/${REPOSITORY}/inbox`, { headers: { authorization: `Bearer ${bob}` } })).json()) as { items: Array<{ messageId: string }> }).items;
      if (items.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(items.map((n) => n.messageId)).to.deep.equal([message.messageId]);
  });

  it('binds 127.0.0.1 by default, its dev-core too, and says so in the banner', async () => {
    const elsewhere = otherLocalAddress();
    for (const url of [running.url, running.coreUrl]) {
      const port = Number(new URL(url).port);
      expect(await accepts('127.0.0.1', port), url).to.equal(true);
      expect(await accepts(elsewhere, port), `${url} on ${elsewhere}`).to.equal(false);
    }
    expect(running.banner).to.match(/^bound to: +127\.0\.0\.1, this machine only \(HOST=0\.0\.0\.0 serves other machines too\)$/m);
    // The distributed services keep binding every interface, as a pod must.
    expect(httpConfigOf(z.object(httpFields).parse({})).host).to.equal('0.0.0.0');
  });

  it('binds every interface when HOST says so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chat-aio-'));
    const open = await startAllInOne(loadAllInOneConfig({ PORT: '0', HOST: '0.0.0.0', CORE_URL: running.coreUrl, DATA_DIR: dir, LOG_LEVEL: 'silent' }));
    try {
      expect(await accepts(otherLocalAddress(), Number(new URL(open.url).port))).to.equal(true);
      expect(open.banner).to.match(/^bound to: +0\.0\.0\.0 \(HOST\): other machines can reach it$/m);
    } finally {
      await open.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('always runs in development mode: dev-core\'s token and a plain-http core on another host are accepted', () => {
    const config = loadAllInOneConfig({ CORE_URL: 'http://core.example:8080' });
    expect(config.core).to.include({ url: 'http://core.example:8080', serviceToken: 'dev-core-service-token' });
  });

  it('closes a client that never finishes its headers, on the chat port and on the embedded dev-core', async () => {
    for (const url of [running.url, running.coreUrl]) {
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write('GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n');
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      const started = Date.now();
      await once(socket, 'close');
      expect(Date.now() - started, url).to.be.below(10_000);
      expect(answer, url).to.match(/^HTTP\/1\.1 408/);
    }
  });

  it('keeps an event stream open well past the request timeout', async () => {
    const token = running.banner.match(/human u_alice: (\S+)/)![1]!;
    const stream = await fetch(`${running.url}/v1/repositories/${REPOSITORY}/room/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(stream.status).to.equal(200);
    const reader = stream.body!.getReader();
    const started = Date.now();
    let heartbeats = 0;
    while (Date.now() - started < 3000) {
      const { done, value } = await reader.read();
      expect(done, 'the stream ended early').to.equal(false);
      heartbeats += (new TextDecoder().decode(value).match(/event: heartbeat/g) ?? []).length;
    }
    await reader.cancel();
    expect(heartbeats).to.be.at.least(5);
  });
});
