import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ulid } from 'ulid';
import {
  appendMessage,
  assertTotalOrder,
  inboxOf,
  listInbox,
  mention,
  messageEvents,
  openWorld,
  redisBackbone,
  SERVICE_TOKEN,
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  waitFor,
  type TestWorld,
} from '../test/notifier-harness.ts';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/** Reliability test 7: a notifier SIGKILLed mid-batch loses and doubles nothing. */
describe('notifier process', function () {
  this.timeout(120_000);
  let world: TestWorld;
  const children: ChildProcess[] = [];

  before(async () => {
    world = await openWorld();
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await world.close();
  });

  function startNotifierProcess(prefix: string): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', MAIN], {
      cwd: PACKAGE_DIR,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: TEST_DATABASE_URL,
        REDIS_URL: TEST_REDIS_URL,
        CORE_URL: world.core.url,
        CORE_SERVICE_TOKEN: SERVICE_TOKEN,
        REDIS_KEY_PREFIX: prefix,
        NOTIFIER_ADMIN_PORT: '0',
        NOTIFIER_BATCH_SIZE: '16',
        NOTIFIER_CLAIM_IDLE_MS: '1500',
        NOTIFIER_SWEEP_GRACE_MS: '3000',
        NOTIFIER_SWEEP_INTERVAL_MS: '200',
        NOTIFIER_LEASE_MS: '3000',
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    return child;
  }

  it('loses and doubles nothing when one notifier is killed mid-batch and another takes over', async function () {
    const prefix = `t-${ulid()}`;
    const publisher = redisBackbone(prefix);
    const targets = [
      ['human', 'u_bob'],
      ['human', 'u_alice'],
      ['bot', 'b_ci'],
    ] as const;
    const keys = targets.map(([kind, id]) => inboxOf(world.repositoryId, kind, id));
    const before = await Promise.all(keys.map(async (k) => (await listInbox(world.store, k)).length));
    const total = 300;
    const sent: string[] = [];
    for (let i = 0; i < total; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, () =>
          appendMessage(world.store, { repositoryId: world.repositoryId, branchId: i % 100 === 0 ? world.branchId : null }, targets.map(([kind, id], t) => mention(kind, id, t * 10, t * 10 + 4))),
        ),
      );
      await publisher.publish(batch.flatMap(messageEvents));
      sent.push(...batch.map((m) => m.messageId));
    }

    const first = startNotifierProcess(prefix);
    const written = async () => (await Promise.all(keys.map((k) => listInbox(world.store, k)))).reduce((n, rows, i) => n + rows.length - before[i]!, 0);
    await waitFor('the first notifications', async () => (await written()) > 0, 30_000, 10);
    first.kill('SIGKILL');
    await once(first, 'exit');
    const atKill = await written();
    expect(atKill).to.be.lessThan(total * targets.length);

    const second = startNotifierProcess(prefix);
    await waitFor('every notification', async () => (await written()) >= total * targets.length, 60_000, 200);
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, key] of keys.entries()) {
      const rows = await listInbox(world.store, key);
      assertTotalOrder(rows);
      const mine = rows.slice(before[i]!).map((n) => n.messageId);
      expect(mine, key).to.have.length(total);
      expect(new Set(mine)).to.deep.equal(new Set(sent));
    }
    const left = await Promise.all(sent.map((id) => world.store.mentionFanout.find(id)));
    expect(left.filter((r) => r !== null)).to.have.length(0);

    second.kill('SIGTERM');
    const [code] = (await once(second, 'exit')) as [number | null];
    expect(code).to.equal(0);
    await publisher.close();
  });
});
