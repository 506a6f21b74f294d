import { expect } from 'chai';
import { ChatClient, type NotificationResponse, type StreamStatus } from '@chat/client';
import { startStack, type Stack } from '../harness/stacks.ts';
import { printReport } from '../harness/sse-delivery-check.ts';
import { TcpProxy } from '../harness/tcp-proxy.ts';
import { eventDataProblems } from './sdk-fetch-recorder.ts';

const HEARTBEAT_MS = 500;
const MENTIONS = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('clients: the SDK inbox stream consumer across cut connections and rotations (all-in-one)', function () {
  this.timeout(180_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack('embedded', { GATEWAY_MAX_STREAM_AGE_MS: '2000', GATEWAY_HEARTBEAT_MS: String(HEARTBEAT_MS), APPEND_RATE_LIMIT: '1000000' });
  });
  after(async () => {
    await stack?.stop();
  });

  it(`${MENTIONS} mentions while every connection is reset twice and the stream rotates: the handler sees each notification once, in inbox order, and a new consumer resumes after the cursor`, async () => {
    const { scenario, actors } = await stack.scenario();
    const { repositoryId } = scenario;
    const target = new URL(stack.chat.url);
    const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port) });
    await proxy.start();
    const reader = await actors.reader();
    const viaProxy = new ChatClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, token: reader });
    const direct = new ChatClient({ baseUrl: stack.chat.url, token: reader });
    const bot = new ChatClient({ baseUrl: stack.chat.url, token: await actors.appendBot() });
    const mention = (i: number) => {
      const body = `ping #${i} @${scenario.users.reader}`;
      const startByte = Buffer.byteLength(body) - Buffer.byteLength(`@${scenario.users.reader}`);
      return bot.appendRepositoryMessage(repositoryId, {
        bodyMarkdown: body,
        mentions: [{ principalKind: 'human', principalId: scenario.users.reader, startByte, endByte: Buffer.byteLength(body) }],
      });
    };

    const statuses: StreamStatus[] = [];
    const handled: Array<{ id: string; data: NotificationResponse }> = [];
    const stream = viaProxy.streamInbox({ repositoryId }, { heartbeatIntervalMs: HEARTBEAT_MS, backoff: { baseDelayMs: 100, maxDelayMs: 800 }, onStatus: (s) => statuses.push(s) });
    const running = stream.run(async (event) => {
      await sleep(Math.random() * 3);
      handled.push(event);
    });
    try {
      for (let i = 0; i < MENTIONS; i += 1) {
        await mention(i);
        if (i === 20 || i === 40) {
          await proxy.cut();
          await sleep(700);
          await proxy.restore();
        }
        await sleep(40);
      }
      const listed: NotificationResponse[] = [];
      for await (const n of direct.inboxNotifications({ repositoryId })) listed.push(n);
      expect(listed).to.have.length(MENTIONS);
      const deadline = Date.now() + 30_000;
      while (handled.length < MENTIONS && Date.now() < deadline) await sleep(100);
      // A stream rotates within GATEWAY_MAX_STREAM_AGE_MS (+20 %) of its open; on a fast machine the
      // mentions can all be through before that, so the consumer is kept open until it has rotated once.
      while (!statuses.some((s) => s.reason === 'handoff') && Date.now() < deadline + 5_000) await sleep(100);
      await sleep(HEARTBEAT_MS);
      stream.close();
      await running;

      const opens = statuses.filter((s) => s.reason === 'open').length;
      const handoffs = statuses.filter((s) => s.reason === 'handoff').length;
      printReport('sdk inbox stream', { expected: listed.length, handled: handled.length, opens, handoffs });
      expect(handled.map((e) => e.data.notificationId), 'each notification once, in inbox order').to.deep.equal(listed.map((n) => n.notificationId));
      expect(handled.map((e) => e.id), 'the event id is the notification cursor').to.deep.equal(listed.map((n) => n.cursor));
      for (const event of handled) expect(eventDataProblems('NotificationResponse', event.data)).to.deep.equal([]);
      expect(opens, 'reconnected after each cut').to.be.at.least(3);
      expect(handoffs, 'the stream rotated').to.be.at.least(1);
      expect(stream.cursor).to.equal(listed.at(-1)!.cursor);

      // A new consumer from the cursor gets only what came after it.
      const next = await mention(MENTIONS);
      const resumed = direct.streamInbox({ repositoryId, lastEventId: stream.cursor }, { heartbeatIntervalMs: HEARTBEAT_MS });
      let first: NotificationResponse | undefined;
      await resumed.run((event) => {
        first = event.data;
        resumed.close();
      });
      expect(first?.messageId).to.equal(next.message.messageId);
    } finally {
      stream.close();
      await proxy.close();
    }
  });
});
