import { expect } from 'chai';
import { ChatApiError, ChatClient, ChatNetworkError, type MessageResponse, type NotificationResponse } from '@chat/client';
import { freePort } from '../harness/free-port.ts';
import { startStack, type Stack } from '../harness/stacks.ts';
import { FetchRecorder, eventDataProblems } from './sdk-fetch-recorder.ts';
import { ResponseCuttingProxy } from './response-cutting-proxy.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const byteSpan = (body: string, text: string) => {
  const startByte = Buffer.byteLength(body.slice(0, body.indexOf(text)));
  return { startByte, endByte: startByte + Buffer.byteLength(text) };
};
const FAST_RETRY = { maxAttempts: 30, baseDelayMs: 50, maxDelayMs: 400 };

describe('clients: the SDK against a real all-in-one (REST operations, retries, idempotency)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let recorder: FetchRecorder;

  before(async () => {
    // A small append window so the 429 path is reachable; each test uses a fresh room and sender-room scope.
    stack = await startStack('embedded', { APPEND_RATE_LIMIT: '4', APPEND_RATE_WINDOW_SECONDS: '1' });
  });
  after(async () => {
    await stack?.stop();
  });
  beforeEach(() => {
    recorder = new FetchRecorder();
  });
  afterEach(() => {
    expect(recorder.violations, 'every answer the SDK saw complies with the OpenAPI document').to.deep.equal([]);
  });

  const client = (token: ConstructorParameters<typeof ChatClient>[0]['token'], baseUrl = stack.chat.url) =>
    new ChatClient({ baseUrl, token, fetch: recorder.fetch, retry: FAST_RETRY });

  it('one client object covers the REST operations and the streams of the contract, with typed results', async () => {
    const { scenario, actors } = await stack.scenario();
    const { repositoryId, branchId } = scenario;
    const writer = client(await actors.writer());
    const bot = client(await actors.appendBot());
    const reader = client(async () => actors.reader());

    expect(await writer.getRepositoryRoom(repositoryId)).to.include({ repositoryId, kind: 'repository', persisted: false, messageCount: 0 });
    const first = await writer.appendRepositoryMessage(repositoryId, { bodyMarkdown: 'hello **room**' });
    expect(first.created).to.equal(true);
    expect(first.message).to.include({ repositoryId, bodyMarkdown: 'hello **room**', idempotencyKey: first.idempotencyKey });
    const body = `ping @${scenario.users.reader}`;
    const mentioned = await bot.appendBranchMessage(repositoryId, branchId, {
      bodyMarkdown: body,
      mentions: [{ principalKind: 'human', principalId: scenario.users.reader, ...byteSpan(body, `@${scenario.users.reader}`) }],
    });
    const human = `and @${scenario.users.reader} again`;
    const byHuman = await writer.appendMessage(
      { repositoryId, branchId },
      { bodyMarkdown: human, mentions: [{ principalKind: 'human', principalId: scenario.users.reader, ...byteSpan(human, `@${scenario.users.reader}`) }] },
      { coreResourceToken: `Bearer ${await actors.coreResource()}` },
    );
    expect(byHuman.message.mentions).to.have.length(1);
    expect(await reader.getBranchRoom(repositoryId, branchId)).to.include({ kind: 'branch', persisted: true, messageCount: 2 });
    expect((await reader.listRepositoryMessages(repositoryId)).items.map((m) => m.messageId)).to.deep.equal([first.message.messageId]);
    const branchPage = await reader.listBranchMessages(repositoryId, branchId, { limit: 1 });
    expect(branchPage.items.map((m) => m.messageId)).to.deep.equal([mentioned.message.messageId]);
    expect(branchPage.nextCursor).to.be.a('string');

    // The inbox fills asynchronously (the notifier); the stream delivers both notifications in order.
    const inbox = reader.streamInbox({ repositoryId }, { heartbeatIntervalMs: 15_000 });
    const notifications: NotificationResponse[] = [];
    await inbox.run((event) => {
      expect(eventDataProblems('NotificationResponse', event.data)).to.deep.equal([]);
      expect(event.id).to.equal(event.data.cursor);
      notifications.push(event.data);
      if (notifications.length === 2) inbox.close();
    });
    expect(notifications.map((n) => n.messageId)).to.deep.equal([mentioned.message.messageId, byHuman.message.messageId]);
    expect(inbox.state).to.equal('closed');
    expect(inbox.cursor).to.equal(notifications[1]!.cursor);

    const listed: NotificationResponse[] = [];
    for await (const n of reader.inboxNotifications({ repositoryId, pageSize: 1 })) listed.push(n);
    expect(listed.map((n) => n.notificationId)).to.deep.equal(notifications.map((n) => n.notificationId));
    const ack = await reader.acknowledgeRepositoryInbox(repositoryId, { throughCursor: notifications[0]!.cursor, expectedCursor: null });
    expect(ack).to.deep.equal({ acknowledgedCursor: notifications[0]!.cursor, replayed: false });
    expect((await reader.listRepositoryInbox(repositoryId)).acknowledgedCursor).to.equal(notifications[0]!.cursor);
    const stale = await reader.acknowledgeRepositoryInbox(repositoryId, { throughCursor: notifications[1]!.cursor, expectedCursor: null }).catch((e: unknown) => e);
    expect(stale).to.be.instanceOf(ChatApiError).and.include({ code: 'INBOX_CHECKPOINT_STALE', status: 409 });

    // The branch room stream from the first message's cursor delivers only what follows it.
    const room = reader.streamRoom({ repositoryId, branchId, lastEventId: null });
    const seen: MessageResponse[] = [];
    let firstCursor: string | undefined;
    for await (const event of room) {
      expect(eventDataProblems('MessageResponse', event.data)).to.deep.equal([]);
      seen.push(event.data);
      firstCursor ??= event.id;
      if (seen.length === 2) break;
    }
    expect(seen.map((m) => m.messageId)).to.deep.equal([mentioned.message.messageId, byHuman.message.messageId]);
    const resumed = reader.streamRoom({ repositoryId, branchId, lastEventId: firstCursor });
    for await (const event of resumed) {
      expect(event.data.messageId, 'the replay of the resume cursor is dropped').to.equal(byHuman.message.messageId);
      break;
    }
    expect(recorder.calls.every((c) => !c.path.includes('Bearer') && !/token/i.test(c.path)), 'no token in a URL').to.equal(true);
  });

  it('an append whose answer is lost is retried with the same Idempotency-Key and stores exactly one message (200 replay)', async () => {
    const { scenario, actors } = await stack.scenario();
    const proxy = new ResponseCuttingProxy(new URL(stack.chat.url));
    await proxy.start();
    try {
      const writer = client(await actors.writer(), proxy.url);
      proxy.cutsLeft = 1;
      const sent = await writer.appendRepositoryMessage(scenario.repositoryId, { bodyMarkdown: 'sent once, answered once' });
      expect(proxy.cut).to.equal(1);
      expect(sent.created, 'the retry was answered as a replay').to.equal(false);
      const posts = recorder.to('POST', `/v1/repositories/${scenario.repositoryId}/room/messages`);
      expect(posts.map((c) => c.outcome)).to.deep.equal(['network', 200]);
      expect(new Set(posts.map((c) => c.idempotencyKey))).to.deep.equal(new Set([sent.idempotencyKey]));
      const items = (await writer.listRepositoryMessages(scenario.repositoryId)).items;
      expect(items.map((m) => m.bodyMarkdown)).to.deep.equal(['sent once, answered once']);

      // Reads retry the same way.
      proxy.cutsLeft = 2;
      expect((await writer.getRepositoryRoom(scenario.repositoryId)).messageCount).to.equal(1);
      expect(recorder.to('GET', `/v1/repositories/${scenario.repositoryId}/room`).map((c) => c.outcome)).to.deep.equal(['network', 'network', 200]);
    } finally {
      await proxy.stop();
    }
  });

  it('an acknowledgement with expectedCursor whose answer is lost: the retry finds its own write and answers replayed, not stale', async () => {
    const { scenario, actors } = await stack.scenario();
    const proxy = new ResponseCuttingProxy(new URL(stack.chat.url));
    await proxy.start();
    try {
      const body = `ping @${scenario.users.reader}`;
      await client(await actors.appendBot()).appendRepositoryMessage(scenario.repositoryId, {
        bodyMarkdown: body,
        mentions: [{ principalKind: 'human', principalId: scenario.users.reader, ...byteSpan(body, `@${scenario.users.reader}`) }],
      });
      const reader = client(await actors.reader(), proxy.url);
      let notification: NotificationResponse | undefined;
      for (let i = 0; i < 100 && !notification; i += 1) {
        notification = (await reader.listRepositoryInbox(scenario.repositoryId)).items[0];
        if (!notification) await sleep(100);
      }
      proxy.cutsLeft = 1;
      const ack = await reader.acknowledgeRepositoryInbox(scenario.repositoryId, { throughCursor: notification!.cursor, expectedCursor: null });
      expect(proxy.cut).to.equal(1);
      expect(ack).to.deep.equal({ acknowledgedCursor: notification!.cursor, replayed: true });
      expect(recorder.to('POST', `/v1/repositories/${scenario.repositoryId}/inbox/acknowledgements`).map((c) => c.outcome)).to.deep.equal(['network', 409]);
      // A stale expectation of the caller's own is still an error.
      const stale = await reader.acknowledgeRepositoryInbox(scenario.repositoryId, { throughCursor: notification!.cursor, expectedCursor: null }).catch((e: unknown) => e);
      expect(stale).to.be.instanceOf(ChatApiError).and.include({ code: 'INBOX_CHECKPOINT_STALE', attempts: 1 });
    } finally {
      await proxy.stop();
    }
  });

  it('503 (core unavailable) is retried with backoff and the same key until the service recovers; one message', async () => {
    const { scenario, actors } = await stack.scenario();
    const writer = client(await actors.writer());
    await stack.core.setFaults('unavailable');
    const recovery = sleep(1500).then(() => stack.core.setFaults('ok'));
    try {
      const sent = await writer.appendRepositoryMessage(scenario.repositoryId, { bodyMarkdown: 'through an outage' });
      const posts = recorder.to('POST', `/v1/repositories/${scenario.repositoryId}/room/messages`);
      expect(posts.length).to.be.greaterThan(1);
      expect(posts.slice(0, -1).every((c) => c.outcome === 503)).to.equal(true);
      expect(posts.at(-1)!.outcome).to.equal(201);
      expect(new Set(posts.map((c) => c.idempotencyKey)).size).to.equal(1);
      expect(sent.created).to.equal(true);
    } finally {
      await recovery;
      await stack.core.setFaults('ok');
    }
    expect((await client(await actors.reader()).listRepositoryMessages(scenario.repositoryId)).items).to.have.length(1);
  });

  it('429 waits Retry-After and retries with the same key: 10 concurrent sends store 10 messages', async () => {
    const { scenario, actors } = await stack.scenario();
    const writer = client(await actors.writer());
    const bodies = Array.from({ length: 10 }, (_, i) => `burst ${i}`);
    const results = await Promise.all(bodies.map((bodyMarkdown) => writer.appendRepositoryMessage(scenario.repositoryId, { bodyMarkdown })));
    const posts = recorder.to('POST', `/v1/repositories/${scenario.repositoryId}/room/messages`);
    expect(posts.filter((c) => c.outcome === 429).length, 'the window of 4 was exceeded').to.be.greaterThan(0);
    for (const result of results) {
      const attempts = posts.filter((c) => c.idempotencyKey === result.idempotencyKey);
      expect(attempts.at(-1)!.outcome).to.equal(201);
      expect(attempts.slice(0, -1).every((c) => c.outcome === 429)).to.equal(true);
    }
    const stored: string[] = [];
    for await (const m of writer.roomMessages({ repositoryId: scenario.repositoryId, pageSize: 3 })) stored.push(m.bodyMarkdown);
    expect([...stored].sort()).to.deep.equal([...bodies].sort());
  });

  it('never retries other 4xx: IDEMPOTENCY_KEY_REUSED, 403 and CURSOR_INVALID surface at once as ChatApiError with code, status and requestId', async () => {
    const { scenario, actors } = await stack.scenario();
    const writer = client(await actors.writer());
    const path = `/v1/repositories/${scenario.repositoryId}/room/messages`;
    const first = await writer.appendRepositoryMessage(scenario.repositoryId, { bodyMarkdown: 'one' });
    const replay = await writer.appendRepositoryMessage(scenario.repositoryId, { bodyMarkdown: 'one' }, { idempotencyKey: first.idempotencyKey });
    expect(replay).to.deep.include({ created: false, idempotencyKey: first.idempotencyKey });
    expect(replay.message.messageId).to.equal(first.message.messageId);
    const reused = await writer.appendRepositoryMessage(scenario.repositoryId, { bodyMarkdown: 'two' }, { idempotencyKey: first.idempotencyKey, requestId: 'sdk-test.reuse' }).catch((e: unknown) => e);
    expect(reused).to.be.instanceOf(ChatApiError).and.include({ code: 'IDEMPOTENCY_KEY_REUSED', status: 409, requestId: 'sdk-test.reuse', retryAfter: undefined });
    expect(recorder.to('POST', path).map((c) => c.outcome)).to.deep.equal([201, 200, 409]);

    const outsider = client(await actors.outsider());
    const denied = await outsider.appendRepositoryMessage(scenario.repositoryId, { bodyMarkdown: 'not mine' }).catch((e: unknown) => e);
    expect(denied).to.be.instanceOf(ChatApiError).and.include({ status: 403, code: 'AUTHORIZATION_DENIED' });
    expect((denied as ChatApiError).requestId).to.be.a('string');
    expect(recorder.to('POST', path)).to.have.length(4);

    const badCursor = await writer.listRepositoryMessages(scenario.repositoryId, { cursor: 'forged' }).catch((e: unknown) => e);
    expect(badCursor).to.be.instanceOf(ChatApiError).and.include({ status: 400, code: 'CURSOR_INVALID' });
    expect(recorder.to('GET', path)).to.have.length(1);
  });

  it('a token function is asked once more with forceRefresh after a 401; a refused string token fails at once', async () => {
    const { scenario, actors } = await stack.scenario();
    const real = await actors.reader();
    const asked: boolean[] = [];
    const refreshing = client(({ forceRefresh }) => {
      asked.push(forceRefresh);
      return forceRefresh ? real : 'expired-or-garbage';
    });
    expect((await refreshing.getRepositoryRoom(scenario.repositoryId)).repositoryId).to.equal(scenario.repositoryId);
    expect(asked).to.deep.equal([false, true]);
    const refused = await client('garbage').getRepositoryRoom(scenario.repositoryId).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(ChatApiError).and.include({ status: 401 });
    expect(recorder.calls.filter((c) => c.authorization === 'Bearer garbage')).to.have.length(1);
  });

  it('network failures are retried within the budget, then surface as ChatNetworkError', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const sdk = new ChatClient({ baseUrl: closed, token: 't', fetch: recorder.fetch, retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 } });
    const failed = await sdk.getRepositoryRoom('01J00000000000000000000000').catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(ChatNetworkError);
    expect(recorder.calls.map((c) => c.outcome)).to.deep.equal(['network', 'network', 'network']);
  });
});
