/**
 * Reliability test 20 on real processes: all-in-one processes started on one embedded data folder.
 * Exactly one runs, every other stops naming the folder and the owner's PID, no append acknowledged
 * with 201 is lost across a clean restart or a SIGKILL, a SIGKILLed owner's folder is taken over by
 * the next start, and tokens minted before a restart are accepted after it.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ulid } from 'ulid';
import type { MessagePageResponse, MessageResponse } from '@chat/contracts';
import { ApiClient } from '../harness/api-client.ts';
import { ChildService } from '../harness/child-service.ts';
import { DevCoreClient } from '../harness/dev-core-client.ts';
import { freePort } from '../harness/free-port.ts';

const SCRIPT = 'services/all-in-one/src/main.ts';
/** The demo repository of dev-core's bundled fixture, where u_alice writes. */
const ROOM = { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F' };

interface Contender {
  name: string;
  env: Record<string, string>;
  url: string;
  coreUrl: string;
  service: ChildService;
}

async function contender(name: string, dataDir: string, ports?: { port: number; devCorePort: number }): Promise<Contender> {
  const port = ports?.port ?? (await freePort());
  const devCorePort = ports?.devCorePort ?? (await freePort());
  const env = { PORT: String(port), DEV_CORE_PORT: String(devCorePort), DATA_DIR: dataDir, PRINT_DEMO_TOKENS: 'false', LOG_LEVEL: 'info' };
  return { name, env, url: `http://127.0.0.1:${port}`, coreUrl: `http://127.0.0.1:${devCorePort}`, service: new ChildService({ name, script: SCRIPT, env }) };
}

/** Resolves true once the process serves the contract, false once it has exited. */
async function runsOrExits(c: Contender): Promise<boolean> {
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    if (c.service.hasExited) return false;
    if (await fetch(`${c.url}/v1/openapi.json`).then((r) => r.status === 200, () => false)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${c.name} neither served nor exited:\n${c.service.log}`);
}

async function exitCode(c: Contender): Promise<number | null> {
  if (c.service.process.exitCode === null && c.service.process.signalCode === null) await once(c.service.process, 'exit');
  // 'close' follows the last output chunk.
  if (!c.service.process.stdout!.readableEnded) await once(c.service.process, 'close').catch(() => undefined);
  return c.service.process.exitCode;
}

/** Every message of the demo room, oldest first. */
async function allMessages(api: ApiClient, token: string): Promise<MessageResponse[]> {
  const all: MessageResponse[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: MessagePageResponse } = await api.list<MessagePageResponse>(ROOM, token, `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.status).to.equal(200);
    all.push(...page.body.items);
    cursor = page.body.nextCursor ?? null;
  } while (cursor);
  return all;
}

describe('lifecycle: one embedded data folder, one process (reliability test 20)', function () {
  this.timeout(900_000);
  let dataDir: string;
  const started: Contender[] = [];
  let owner: Contender;
  let token: string;
  const acknowledged: string[] = [];

  /** Appends `count` messages through `c`, recording each one acknowledged with 201. */
  async function appendThrough(c: Contender, count: number, label: string): Promise<void> {
    const api = new ApiClient(c.url);
    try {
      for (let i = 0; i < count; i++) {
        const answer = await api.append<MessageResponse>(ROOM, token, { bodyMarkdown: `${label} ${i}` }, { key: ulid() });
        expect(answer.status, answer.text).to.equal(201);
        acknowledged.push(answer.body.messageId);
      }
    } finally {
      api.close();
    }
  }

  async function expectAllAcknowledged(c: Contender): Promise<void> {
    const api = new ApiClient(c.url);
    try {
      const listed = new Set((await allMessages(api, token)).map((m) => m.messageId));
      expect(acknowledged.filter((id) => !listed.has(id)), 'acknowledged appends missing').to.deep.equal([]);
    } finally {
      api.close();
    }
  }

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'chat-one-owner-'));
  });
  after(async () => {
    await Promise.all(started.map((c) => c.service.stop()));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('of three processes started at once on one DATA_DIR, exactly one runs; the others exit non-zero naming the folder and its PID', async () => {
    const racers = await Promise.all([0, 1, 2].map((i) => contender(`one-owner-race-${i}`, dataDir)));
    started.push(...racers);
    const runs = await Promise.all(racers.map(runsOrExits));
    expect(runs.filter(Boolean), racers.map((c) => c.service.log).join('\n----\n')).to.have.length(1);
    owner = racers[runs.indexOf(true)]!;
    for (const loser of racers.filter((c) => c !== owner)) {
      expect(await exitCode(loser), loser.service.log).to.not.equal(0);
      expect(loser.service.log).to.contain(`chat: cannot start: the data folder ${dataDir} is in use by process ${owner.service.pid}`);
    }
  });

  it('a process started later on the folder is refused too, while every append the owner acknowledged is kept', async () => {
    token = await new DevCoreClient(owner.coreUrl).mintToken({ type: 'human', subjectId: 'u_alice', expiresInSeconds: 3600 });
    await appendThrough(owner, 10, 'before the late start');
    const late = await contender('one-owner-late', dataDir);
    started.push(late);
    expect(await runsOrExits(late)).to.equal(false);
    expect(await exitCode(late)).to.not.equal(0);
    expect(late.service.log).to.contain(`the data folder ${dataDir} is in use by process ${owner.service.pid}`);
    await appendThrough(owner, 10, 'after the late start');
    await expectAllAcknowledged(owner);
  });

  it('after a clean restart every acknowledged append is there, and the token minted before it is still accepted', async () => {
    await owner.service.stop(30_000);
    expect(owner.service.process.exitCode, owner.service.log).to.equal(0);
    const restarted = await contender('one-owner-restart', dataDir, { port: Number(new URL(owner.url).port), devCorePort: Number(new URL(owner.coreUrl).port) });
    started.push(restarted);
    expect(await runsOrExits(restarted), restarted.service.log).to.equal(true);
    expect(restarted.service.log).not.to.contain('took over the data folder');
    owner = restarted;
    // The token was minted by the dev-core of the process before the restart.
    await expectAllAcknowledged(owner);
    await appendThrough(owner, 10, 'after the restart');
  });

  it("a SIGKILLed owner's folder is taken over by the next start, and no acknowledged append is lost", async () => {
    const killedPid = owner.service.pid;
    owner.service.process.kill('SIGKILL');
    await once(owner.service.process, 'exit');
    const next = await contender('one-owner-after-kill', dataDir, { port: Number(new URL(owner.url).port), devCorePort: Number(new URL(owner.coreUrl).port) });
    started.push(next);
    expect(await runsOrExits(next), next.service.log).to.equal(true);
    expect(next.service.log).to.contain('took over the data folder from a process that no longer runs').and.contain(`"previousPid":${killedPid}`);
    owner = next;
    await expectAllAcknowledged(owner);
    expect(acknowledged).to.have.length(30);
  });
});
