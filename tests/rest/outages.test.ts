import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse, RoomResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { startStack, type Stack } from '../harness/stacks.ts';
import { TcpProxy } from '../harness/tcp-proxy.ts';
import { createScratchDatabase, type ScratchDatabase } from '../harness/scratch-database.ts';

const CORE_TIMEOUT_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('invariant 8: outages answer 503 with the right code, write nothing half-way, and recover', function () {
  this.timeout(90_000);
  let stack: Stack;
  let proxy: TcpProxy;

  let scratch: ScratchDatabase;

  before(async () => {
    scratch = await createScratchDatabase('outages');
    const database = new URL(scratch.url);
    proxy = new TcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
    const port = await proxy.start();
    database.host = `127.0.0.1:${port}`;
    // PostgreSQL only through the proxy; the in-process backbone keeps Redis out of this test.
    stack = await startStack('embedded', { DATABASE_URL: database.toString(), CORE_TIMEOUT_MS: String(CORE_TIMEOUT_MS) });
  });
  after(async () => {
    await stack?.core.setFaults('ok').catch(() => undefined);
    await stack?.stop();
    await proxy?.close();
    await scratch?.drop();
  });
  afterEach(async function () {
    // After a crash (reported by the test itself) there is nothing left to reset.
    if (stack.chat.service.hasExited) return;
    await stack.core.setFaults('ok');
    await proxy.restore();
  });

  it('section 5: core unavailable gives 503 AUTHORIZATION_UNAVAILABLE on every operation, and service resumes when it returns', async () => {
    const { scenario, actors } = await stack.scenario();
    const scopes = [{ repositoryId: scenario.repositoryId }, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }];
    const human = await actors.writer();
    const bot = await actors.appendBot();
    // Warm the key sets so the failure below is core's decision endpoint, not the first key fetch.
    expectStatus(await stack.api.getRoom(scopes[0]!, human), 200);
    expectStatus(await stack.api.getRoom(scopes[0]!, bot), 200);
    await stack.core.setFaults('unavailable');
    const key = ulid();
    for (const scope of scopes) {
      for (const token of [human, bot]) {
        expectError(await stack.api.getRoom(scope, token), 503, 'AUTHORIZATION_UNAVAILABLE');
        expectError(await stack.api.list(scope, token), 503, 'AUTHORIZATION_UNAVAILABLE');
        expectError(await stack.api.append(scope, token, { bodyMarkdown: 'during outage' }, { key }), 503, 'AUTHORIZATION_UNAVAILABLE');
      }
    }
    await stack.core.setFaults('ok');
    expectStatus(await stack.api.append(scopes[0]!, human, { bodyMarkdown: 'during outage' }, { key }), 201);
    const list = await stack.api.list<MessagePageResponse>(scopes[0]!, human);
    expect(list.body.items.map((m) => m.bodyMarkdown)).to.deep.equal(['during outage']);
  });

  it(`section 5: core slower than CORE_TIMEOUT_MS (${CORE_TIMEOUT_MS} ms) gives 503 AUTHORIZATION_UNAVAILABLE without waiting for it`, async () => {
    const { scenario, actors } = await stack.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    expectStatus(await stack.api.getRoom(scope, token), 200);
    await stack.core.setFaults('slow', 3000);
    const started = Date.now();
    expectError(await stack.api.getRoom(scope, token), 503, 'AUTHORIZATION_UNAVAILABLE');
    expectError(await stack.api.append(scope, token, { bodyMarkdown: 'slow' }), 503, 'AUTHORIZATION_UNAVAILABLE');
    expect(Date.now() - started, "both answered before core did").to.be.below(2 * 1500);
    // A core that is slow but inside the budget is fine.
    await stack.core.setFaults('slow', 50);
    expectStatus(await stack.api.append(scope, token, { bodyMarkdown: 'a bit slow' }), 201);
  });

  it('invariant 8: PostgreSQL unreachable gives 503 STORE_UNAVAILABLE, nothing is half-written, and the service recovers by itself', async () => {
    const { scenario, actors } = await stack.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    const before = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: 'before the outage' });
    expectStatus(before, 201);
    await proxy.cut();
    const key = ulid();
    expectError(await stack.api.append(scope, token, { bodyMarkdown: 'during the outage' }, { key }), 503, 'STORE_UNAVAILABLE');
    expectError(await stack.api.getRoom(scope, token), 503, 'STORE_UNAVAILABLE');
    expectError(await stack.api.list(scope, token), 503, 'STORE_UNAVAILABLE');
    await proxy.restore();
    const deadline = Date.now() + 15_000;
    let recovered = await stack.api.list<MessagePageResponse>(scope, token);
    while (recovered.status !== 200 && Date.now() < deadline) {
      expectError(recovered, 503, 'STORE_UNAVAILABLE');
      await sleep(200);
      recovered = await stack.api.list<MessagePageResponse>(scope, token);
    }
    expectStatus(recovered, 200);
    expect(recovered.body.items.map((m) => m.messageId)).to.deep.equal([before.body.messageId]);
    const room = await stack.api.getRoom<RoomResponse>(scope, token);
    expect(room.body.messageCount).to.equal(1);
    // The refused append was never written: the same key now makes it new (201, not a 200 replay).
    expectStatus(await stack.api.append(scope, token, { bodyMarkdown: 'during the outage' }, { key }), 201);
  });

  it('invariant 8: a cut during concurrent appends leaves every message whole — answered 201 means stored, a retry settles every 503', async () => {
    const { scenario, actors } = await stack.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const token = await actors.writer();
    expectStatus(await stack.api.append(scope, token, { bodyMarkdown: 'warm' }), 201);
    const keys = Array.from({ length: 30 }, () => ulid());
    let firstCreated!: () => void;
    const created = new Promise<void>((resolve) => (firstCreated = resolve));
    // Staggered, so the cut lands while some appends are done, some mid-flight and some not yet sent.
    const inFlight = keys.map(async (key, i) => {
      await sleep(i * 4);
      const res = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: `burst ${i}` }, { key });
      if (res.status === 201) firstCreated();
      return res;
    });
    await Promise.race([created, sleep(5000)]);
    await proxy.cut();
    const answers = await Promise.all(inFlight.map((p) => p.catch((err: Error) => err)));
    await sleep(300);
    if (stack.chat.service.hasExited) {
      const log = stack.chat.service.log;
      const crash = log.slice(Math.max(0, log.indexOf('node:events')), log.indexOf('node:events') + 1500);
      expect.fail(`the chat process crashed when PostgreSQL connections were reset mid-request:\n${crash}`);
    }
    for (const a of answers) {
      if (a instanceof Error) throw a;
      expect([201, 503], a.text).to.include(a.status);
    }
    await sleep(200);
    await proxy.restore();
    const deadline = Date.now() + 15_000;
    const settled = new Map<string, MessageResponse>();
    const answered = answers as Array<Exclude<(typeof answers)[number], Error>>;
    for (const [i, key] of keys.entries()) {
      if (answered[i]!.status === 201) settled.set(key, answered[i]!.body);
    }
    for (const [i, key] of keys.entries()) {
      for (;;) {
        const retry = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: `burst ${i}` }, { key });
        if (retry.status === 503 && Date.now() < deadline) {
          await sleep(200);
          continue;
        }
        expect([200, 201], retry.text).to.include(retry.status);
        if (answered[i]!.status === 201) {
          expect(retry.status).to.equal(200);
          expect(retry.body).to.deep.equal(answered[i]!.body);
        }
        settled.set(key, retry.body);
        break;
      }
    }
    const list = await stack.api.list<MessagePageResponse>(scope, token, 'limit=200');
    const room = await stack.api.getRoom<RoomResponse>(scope, token);
    expect(list.body.items).to.have.length(keys.length + 1);
    expect(room.body.messageCount).to.equal(list.body.items.length);
    expect(new Set(list.body.items.map((m) => m.idempotencyKey))).to.have.property('size', keys.length + 1);
    for (const m of list.body.items.slice(1)) expect(settled.get(m.idempotencyKey)?.messageId).to.equal(m.messageId);
  });
});
