/**
 * The three shipped clients outlive restarts of `pnpm start`'s process: a bot (`runBot`), `chat tail`
 * and an SDK room consumer, each a child process reading its token from a file that
 * `pnpm dev-token --out` wrote, as a person sets them up. While a writer appends at a steady pace
 * (every third message mentioning the bot), the all-in-one is stopped with SIGTERM and started again
 * on the same DATA_DIR and ports, then SIGKILLed and started again. Tokens carry dev-core's URL as
 * their issuer and are checked against the keys it keeps in DATA_DIR, so the clients carry on only
 * when the restarted process accepts the tokens minted before it.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ulid } from 'ulid';
import type { MessageResponse } from '@chat/contracts';
import { ApiClient, ContractViolationError } from '../harness/api-client.ts';
import { startChatProcess, type ChatProcess } from '../harness/chat-process.ts';
import { ChildService, recordMintedToken } from '../harness/child-service.ts';
import { checkDeliveries, expectClean, printReport, readRoomHistory } from '../harness/sse-delivery-check.ts';
import type { ReceivedMessage } from '../harness/sse-resuming-client.ts';
import { testConfig } from '../harness/test-config.ts';
import { mentionBody } from './bot-world.ts';
import { ChatFollower } from './cli-process.ts';

/** dev-core's bundled demo fixture: u_alice writes in this repository, the bot b_ci reads and appends there. */
const ROOM = { repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F' };
const BOT = 'b_ci';
/** The writer's pause between two acknowledged appends. */
const PACE_MS = 150;
const MENTION_EVERY = 3;
/** How long the bot holds each mention before it replies. */
const HANDLER_DELAY_MS = 1000;
/** Acknowledged appends before the first restart, and after each restart before the next step. */
const APPENDS_PER_PHASE = 15;
const SERVICE_ENV = {
  // The writer's whole run stays far below it: a 429 would only slow the test down.
  APPEND_RATE_LIMIT: '100000',
  // A SIGTERM hands the streams off over this window before the process exits.
  GATEWAY_DRAIN_MS: '2000',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const runFile = promisify(execFile);

/**
 * `pnpm dev-token <kind> --out dir` against the running dev-core: the files it wrote, by the CLI
 * flag that reads each (`--token-file`, and for a person `--core-token-file`).
 */
async function devTokenFiles(kind: 'user' | 'bot', coreUrl: string, dir: string): Promise<Record<string, string>> {
  const { stdout } = await runFile('pnpm', ['--silent', 'dev-token', kind, '--out', dir], {
    cwd: testConfig.repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CHAT_CORE_URL: coreUrl },
    timeout: 120_000,
  });
  const files = Object.fromEntries([...stdout.matchAll(/(--[a-z-]*token-file) (\S+)/g)].map((m) => [m[1]!, m[2]!]));
  if (files['--token-file'] === undefined) throw new Error(`pnpm dev-token ${kind} printed no --token-file:\n${stdout}`);
  for (const file of Object.values(files)) recordMintedToken((await readFile(file, 'utf8')).trim());
  return files;
}

/** One client under test, seen from outside: still running, what it printed, how far it got. */
interface ClientUnderTest {
  name: string;
  exited(): boolean;
  output(): string;
  /** Items handled so far: messages printed, or mentions answered. */
  progress(): number;
}

const lineCount = (text: string, pattern: RegExp) => text.split('\n').filter((l) => pattern.test(l)).length;
/** A child's output without its message lines: what it said about its connection and its stop. */
const withoutMessages = (text: string) => text.split('\n').filter((l) => !l.startsWith('{')).join('\n');

/** Message events as the JSON lines of `chat tail --json` or of the SDK consumer carry them. */
function tailDeliveries(stdout: string): ReceivedMessage[] {
  // The CLI prints the message, not its event ID; the message ID stands in for it. Every delivery
  // counts as one connection's: the SDK drops the one replay a reconnect may bring before printing,
  // so any repeat on stdout is a duplicate.
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((line) => ({ id: (JSON.parse(line) as MessageResponse).messageId, data: line, connection: 0 }));
}
function sdkDeliveries(stdout: string): ReceivedMessage[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((line) => {
      const event = JSON.parse(line) as { id: string; data: MessageResponse };
      return { id: event.id, data: JSON.stringify(event.data), connection: 0 };
    });
}

describe('[embedded] clients across restarts of the all-in-one', function () {
  this.timeout(300_000);
  let dataDir: string;
  let tokenDir: string;
  let chat: ChatProcess | undefined;
  const children: Array<{ stop(): Promise<unknown> }> = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'chat-restart-'));
    tokenDir = await mkdtemp(join(tmpdir(), 'chat-restart-tokens-'));
  });

  after(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await chat?.stop();
    await rm(dataDir, { recursive: true, force: true });
    await rm(tokenDir, { recursive: true, force: true });
  });

  it('a bot, `chat tail` and an SDK consumer carry on across a SIGTERM and a SIGKILL restart: every message delivered once and in order, every mention answered once', async () => {
    chat = await startChatProcess({ name: 'chat-restart-0', dataDir, env: SERVICE_ENV });
    const { url, ports } = chat;
    const [userFiles, botFiles] = await Promise.all([devTokenFiles('user', chat.coreUrl, tokenDir), devTokenFiles('bot', chat.coreUrl, tokenDir)]);
    const userTokenFile = userFiles['--token-file']!;
    const botTokenFile = botFiles['--token-file']!;
    const writerToken = (await readFile(userTokenFile, 'utf8')).trim();
    // A person's mention of the bot needs her core resource token as well.
    const writerCoreToken = (await readFile(userFiles['--core-token-file']!, 'utf8')).trim();

    const bot = new ChildService({
      name: 'restart-bot',
      script: 'tests/clients/crash-bot.ts',
      // Each handler holds its mention a while before replying, so a restart can land while one is in hand.
      env: { CHAT_URL: url, CHAT_TOKEN_FILE: botTokenFile, BOT_REPOSITORIES: ROOM.repositoryId, BOT_ACK_EVERY: '5', BOT_MAX_PAUSE_MS: '5', BOT_HANDLER_DELAY_MS: String(HANDLER_DELAY_MS) },
    });
    const tail = new ChatFollower(['tail', '--repository', ROOM.repositoryId, '--json'], { env: { CHAT_URL: url, CHAT_TOKEN_FILE: userTokenFile } });
    const sdk = new ChildService({
      name: 'restart-sdk-consumer',
      script: 'tests/clients/room-stream-consumer.ts',
      env: { CHAT_URL: url, CHAT_TOKEN_FILE: userTokenFile, CHAT_REPOSITORY: ROOM.repositoryId },
    });
    // The services' log keeps only a tail of the output; every line of these two is needed.
    let botOut = '';
    let sdkOut = '';
    bot.process.stdout!.on('data', (c: Buffer) => (botOut += c.toString('utf8')));
    sdk.process.stdout!.on('data', (c: Buffer) => (sdkOut += c.toString('utf8')));
    children.push({ stop: () => bot.stop(30_000) }, { stop: () => tail.stop('SIGINT') }, { stop: () => sdk.stop(30_000) });
    const clients: ClientUnderTest[] = [
      { name: 'the bot', exited: () => bot.hasExited, output: () => bot.log, progress: () => lineCount(botOut, /^handled /) },
      { name: 'chat tail', exited: () => tail.child.exitCode !== null || tail.child.signalCode !== null, output: () => tail.stderr, progress: () => lineCount(tail.stdout, /^\{/) },
      { name: 'the SDK consumer', exited: () => sdk.hasExited, output: () => withoutMessages(sdk.log), progress: () => lineCount(sdkOut, /^\{/) },
    ];

    // The writer: a steady pace of appends, each retried under its Idempotency-Key while the service
    // is away (refused connections, resets, 503) until it is acknowledged.
    const acknowledged: Array<{ messageId: string; mention: boolean }> = [];
    let writing = true;
    let writerError: unknown;
    const writer = (async () => {
      const api = new ApiClient(url);
      try {
        for (let i = 0; writing; i += 1) {
          const mention = i % MENTION_EVERY === 0;
          const body = mention ? mentionBody(BOT, i) : { bodyMarkdown: `message ${i}` };
          const key = ulid();
          const deadline = Date.now() + 120_000;
          for (;;) {
            const answer = await api.append<MessageResponse>(ROOM, writerToken, body, { key, ...(mention ? { coreAuthorization: `Bearer ${writerCoreToken}` } : {}) }).catch((err: unknown) => {
              if (err instanceof ContractViolationError) throw err;
              return err as Error;
            });
            if (!(answer instanceof Error) && (answer.status === 201 || answer.status === 200)) {
              acknowledged.push({ messageId: answer.body.messageId, mention });
              break;
            }
            if (!(answer instanceof Error) && answer.status !== 503) throw new Error(`append ${i} answered ${answer.status}: ${answer.text}`);
            if (Date.now() > deadline) throw new Error(`append ${i} not acknowledged within 120 s: ${answer instanceof Error ? answer.message : answer.text}`);
            await sleep(200);
          }
          await sleep(PACE_MS);
        }
      } finally {
        api.close();
      }
    })().catch((err: unknown) => {
      writerError = err;
    });

    const progress = () => `${acknowledged.length} appends acknowledged; ${clients.map((c) => `${c.name} ${c.progress()}`).join(', ')}`;
    /** Polls `done`, failing as soon as the writer failed or a client stopped. */
    async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 90_000, intervalMs = 100): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (writerError !== undefined) throw writerError;
        for (const c of clients) if (c.exited()) throw new Error(`${c.name} stopped while waiting for ${what} (${progress()}):\n${c.output()}`);
        if (await done()) return;
        if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms: ${progress()}`);
        await sleep(intervalMs);
      }
    }
    /** Waits for more appends and for every client to handle something after the current process started. */
    async function carryOn(phase: string): Promise<void> {
      const appended = acknowledged.length;
      const handled = clients.map((c) => c.progress());
      await until(`progress of every client ${phase}`, () => acknowledged.length >= appended + APPENDS_PER_PHASE && clients.every((c, i) => c.progress() > handled[i]!));
    }

    /** Notifications the bot is handling and has not replied to yet. */
    const inHand = () => {
      const handled = new Set([...botOut.matchAll(/^handled (\S+)/gm)].map((m) => m[1]));
      return [...botOut.matchAll(/^handling (\S+)/gm)].map((m) => m[1]).filter((id) => !handled.has(id));
    };
    // Each restart comes while the bot holds a mention: its reply meets a service that is away.
    const mentionInHand = () => until("a mention in the bot's hands", () => inHand().length > 0);

    await carryOn('before the first restart');
    await mentionInHand();
    await chat.service.stop(30_000);
    expect(chat.service.process.exitCode, `SIGTERM exit:\n${chat.service.log}`).to.equal(0);
    chat = await startChatProcess({ name: 'chat-restart-1', dataDir, ports, env: SERVICE_ENV });
    await carryOn('after the SIGTERM restart');
    await mentionInHand();
    const killed = once(chat.service.process, 'exit');
    chat.service.process.kill('SIGKILL');
    await killed;
    chat = await startChatProcess({ name: 'chat-restart-2', dataDir, ports, env: SERVICE_ENV });
    await carryOn('after the SIGKILL restart');

    writing = false;
    await writer;
    if (writerError !== undefined) throw writerError;

    // Settled: every mention has its reply, and both consumers have delivered the whole room (the
    // writer's messages and the bot's replies).
    const api = new ApiClient(url);
    let history: MessageResponse[] = [];
    const mentions = acknowledged.filter((a) => a.mention).map((a) => a.messageId);
    const repliesTo = () => history.filter((m) => m.senderId === BOT).map((m) => /^re (\S+)$/.exec(m.bodyMarkdown)?.[1] ?? `unexpected body ${m.bodyMarkdown}`);
    await until(
      'reply to every mention',
      async () => {
        history = await readRoomHistory(api, ROOM, writerToken);
        const replied = new Set(repliesTo());
        return mentions.every((id) => replied.has(id));
      },
      90_000,
      500,
    );
    const delivered = (received: ReceivedMessage[]) => new Set(received.map((r) => (JSON.parse(r.data) as MessageResponse).messageId));
    await until('delivery of the whole room to both consumers', () => {
      const toTail = delivered(tailDeliveries(tail.stdout));
      const toSdk = delivered(sdkDeliveries(sdkOut));
      return history.every((m) => toTail.has(m.messageId) && toSdk.has(m.messageId));
    });
    history = await readRoomHistory(api, ROOM, writerToken);
    api.close();

    for (const c of clients) expect(c.exited(), `${c.name} is still running:\n${c.output()}`).to.equal(false);
    await bot.stop(30_000);
    const tailRun = await tail.stop('SIGINT');
    await sdk.stop(30_000);
    expect(bot.process.exitCode, bot.log).to.equal(0);
    expect(botOut).to.match(/^stopped$/m);
    expect(tailRun.code, tailRun.stderr).to.equal(0);
    expect(sdk.process.exitCode, sdk.log).to.equal(0);
    expect(sdkOut).to.match(/^stopped$/m);

    const listed = new Set(history.map((m) => m.messageId));
    expect(acknowledged.filter((a) => !listed.has(a.messageId)), 'acknowledged appends missing from the room').to.deep.equal([]);
    const replies = new Map<string, number>();
    for (const to of repliesTo()) replies.set(to, (replies.get(to) ?? 0) + 1);
    const answered = { mentions: mentions.length, unanswered: mentions.filter((id) => !replies.has(id)).length, answeredTwice: [...replies.values()].filter((n) => n > 1).length, repliesToOthers: [...replies.keys()].filter((id) => !mentions.includes(id)) };
    printReport('bot', { ...answered, repliesToOthers: answered.repliesToOthers.length });
    expect(answered).to.deep.equal({ mentions: mentions.length, unanswered: 0, answeredTwice: 0, repliesToOthers: [] });

    for (const [name, received] of [
      ['chat tail', tailDeliveries(tail.stdout)],
      ['SDK consumer', sdkDeliveries(sdkOut)],
    ] as const) {
      const report = checkDeliveries(history, received);
      printReport(name, { expected: report.expected, delivered: report.delivered, lost: report.lost, duplicated: report.duplicated, reordered: report.reordered, unexpected: report.unexpected });
      expectClean(report, name);
      expect(report.delivered, `${name}: deliveries`).to.equal(history.length);
    }
  });
});
