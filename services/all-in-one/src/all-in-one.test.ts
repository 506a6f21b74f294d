import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startAllInOne, type RunningAllInOne } from './all-in-one.ts';
import { loadAllInOneConfig } from './config.ts';

const REPOSITORY = '01JGFJJZ00QNYBVPQTAT49MN0F';

describe('all-in-one process', function () {
  this.timeout(120_000);
  let dataDir: string;
  let running: RunningAllInOne;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'chat-aio-'));
    running = await startAllInOne(loadAllInOneConfig({ PORT: '0', HOST: '127.0.0.1', DEV_CORE_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
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
});
